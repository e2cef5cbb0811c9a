def dedupe(items):
    """Remove duplicates, keeping the first occurrence order."""
    return list(set(items))
