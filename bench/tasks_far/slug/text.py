import re

from charset import plain


def slugify(title):
    """A URL slug: plain lowercase words joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", plain(title).lower())
    return "-".join(words)
