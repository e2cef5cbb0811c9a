ORDER = 1


def apply(text):
    """Drop surrounding whitespace."""
    return text.lstrip()
