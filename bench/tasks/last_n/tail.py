def last(items, n):
    """The last n items."""
    return items[-n:]
