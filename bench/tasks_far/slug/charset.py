import unicodedata


def plain(text):
    """``text`` without accents: 'Crème' -> 'Creme'."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.combining(c) or c.isascii())
