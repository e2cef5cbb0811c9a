from settings import cover_days


def threshold(category, daily_sales):
    """Reorder when stock falls below this many units."""
    return cover_days(category) * daily_sales
