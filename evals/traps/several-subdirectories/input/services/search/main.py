print('search')
