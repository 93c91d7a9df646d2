print('auth')
