from tax import rate


def order_total(net, region):
    """The gross total, rounded to cents."""
    return net * (1 + rate(region))
