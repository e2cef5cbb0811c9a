import re

ORDER = 3


def apply(text):
    """Runs of spaces inside become one."""
    return re.sub(r" +", " ", text)
