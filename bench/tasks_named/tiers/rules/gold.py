RATE = 20


def discount():
    return RATE / 1000
