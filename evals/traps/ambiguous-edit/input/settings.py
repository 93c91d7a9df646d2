class Database:
    host = "db.internal"
    timeout = 10


class Http:
    base_url = "https://api.example.com"
    timeout = 10
