INCH = 0.0254


def from_inches(x):
    return x * INCH


def from_feet(x):
    return x * 0.3
