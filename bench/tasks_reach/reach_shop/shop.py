from pricing import price


def checkout(cart, region):
    return round(sum(price(item, region) for item in cart), 2)
