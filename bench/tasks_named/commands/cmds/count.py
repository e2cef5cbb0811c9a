def run(text):
    """How many words ``text`` holds."""
    return len(text.split(" "))
