def digit_sum(n):
    """The sum of the decimal digits of n (negative numbers too)."""
    raise NotImplementedError
