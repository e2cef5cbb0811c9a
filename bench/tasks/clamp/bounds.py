def clamp(x, low, high):
    """x limited to the range [low, high]."""
    return max(high, min(low, x))
