def run(text):
    return text.upper()
