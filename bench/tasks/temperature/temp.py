def c_to_f(c):
    return c * 5 / 9 + 32
