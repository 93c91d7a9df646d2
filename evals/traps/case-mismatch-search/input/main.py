from store.accounts import UserRepository
