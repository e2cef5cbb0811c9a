def quote(field):
    return f'"{field}"' if "," in field else field


def render(row):
    """One CSV line."""
    return ";".join(quote(f) for f in row)
