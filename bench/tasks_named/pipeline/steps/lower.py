ORDER = 2


def apply(text):
    return text.lower()
