def word_freq(text):
    """How often each word occurs, lowercased, punctuation (.,!?) removed."""
    raise NotImplementedError
