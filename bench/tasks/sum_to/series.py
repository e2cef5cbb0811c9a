def sum_to(n):
    """1 + 2 + ... + n"""
    return sum(range(1, n))
