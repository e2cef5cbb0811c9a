from datetime import datetime, timezone


def parse_stamp(text: str, tz: str = 'UTC') -> datetime:
    """Stamps look like 2026/12/02-19h21."""
    day, _, time = text.partition('-')
    hour, _, minute = time.partition('h')
    y, m, d = (int(x) for x in day.split('/'))
    return datetime(y, m, d, int(hour), int(minute), tzinfo=timezone.utc)
