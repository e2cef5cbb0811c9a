from store import find


def lookup(address):
    return find(address)
