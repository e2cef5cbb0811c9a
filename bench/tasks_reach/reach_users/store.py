from keys import normalize_email

USERS = {}


def find(address):
    return USERS.get(normalize_email(address))
