import json


def render(row):
    """One JSON array per line."""
    return json.dumps(row)
