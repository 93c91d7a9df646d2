class UserRepository:
    def __init__(self, db):
        self.db = db

    def find(self, user_id):
        return self.db.get(user_id)
