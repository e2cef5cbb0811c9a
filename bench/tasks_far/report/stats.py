from numeric import safe_div


def mean(values):
    return safe_div(sum(values), len(values))


def share(part, whole):
    """part as a percentage of whole."""
    return round(100 * safe_div(part, whole), 1)
