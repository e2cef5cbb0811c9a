from tax import tax_on


def line_total(qty, unit_price):
    return round(qty * unit_price, 2)


def total_due(lines, country):
    """The sum of (qty, unit price) lines plus VAT."""
    net = round(sum(line_total(q, p) for q, p in lines), 2)
    return round(net + tax_on(net, country), 2)
