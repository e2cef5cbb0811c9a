from rates import rate_for


def price(item, region):
    return item * (1 + rate_for(region))
