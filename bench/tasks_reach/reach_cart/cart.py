from inventory import in_stock


def available(names, size):
    return [n for n in names if in_stock(n, size)]
