def parse(text):
    """key=value lines into a dict; blank lines and # comments are skipped."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, value = line.split("=")
        out[key.strip()] = value.strip()
    return out
