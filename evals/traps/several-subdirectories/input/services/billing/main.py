print('billing')
