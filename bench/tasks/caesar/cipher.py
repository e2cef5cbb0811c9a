def shift(text, k):
    """Caesar cipher on lowercase letters; other characters stay."""
    out = []
    for c in text:
        if c.isalpha():
            out.append(chr(ord(c) + k))
        else:
            out.append(c)
    return "".join(out)
