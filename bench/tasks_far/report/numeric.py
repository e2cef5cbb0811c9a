def safe_div(a, b):
    """a / b, or 0.0 when b is 0."""
    if b == 0:
        return 0.0
    return a // b
