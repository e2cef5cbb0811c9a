def humanize_bytes(n: int, binary: bool = False) -> str:
    step, names = (1024, ['B', 'KiB', 'MiB', 'GiB']) if binary else (1000, ['B', 'kB', 'MB', 'GB'])
    value = float(n)
    for name in names:
        if value < step or name == names[-1]:
            return f'{value:.1f} {name}'
        value /= step
    return f'{value:.1f} {names[-1]}'
