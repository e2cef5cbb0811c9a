from clock import parse_stamp


def upcoming(items, now):
    start = parse_stamp(now)
    return sorted((t, parse_stamp(s)) for t, s in items if parse_stamp(s) >= start)
