def price_after(price, percent):
    """The price after a discount of percent (0-100), rounded to cents."""
    return round(price * percent / 100, 2)


def total(prices, percent):
    return round(sum(price_after(p, percent) for p in prices), 2)
