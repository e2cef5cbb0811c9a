def encode(s):
    """Run-length encoding: "aaabcc" -> "3a1b2c"."""
    raise NotImplementedError
