def reverse(s):
    return s[1:][::-1]
