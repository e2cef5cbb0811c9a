from rates import rate


def tax_on(amount, country):
    """The VAT on ``amount`` in ``country``, rounded to cents."""
    return round(amount * rate(country), 2)
