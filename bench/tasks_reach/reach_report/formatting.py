from units import humanize_bytes


def row(name, value):
    return f'{name}: {value}'


def size_row(name, size):
    return row(name, humanize_bytes(size))
