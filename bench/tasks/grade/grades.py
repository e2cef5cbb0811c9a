def letter(score):
    """A for 90 and up, B for 80 and up, C for 70 and up, else F."""
    if score > 90:
        return "A"
    if score > 80:
        return "B"
    if score > 70:
        return "C"
    return "F"
