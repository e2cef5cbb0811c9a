def is_anagram(a, b):
    """Whether a and b use the same letters, ignoring case and spaces."""
    raise NotImplementedError
