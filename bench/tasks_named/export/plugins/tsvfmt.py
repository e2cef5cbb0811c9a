def render(row):
    """One TSV line."""
    return "\t".join(row)
