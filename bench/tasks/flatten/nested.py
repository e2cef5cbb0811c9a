def flatten(items):
    """All non-list values of a nested list, in order."""
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out
