class OrderRepository:
    def __init__(self, db):
        self.db = db
