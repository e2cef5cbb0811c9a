from months import days_in


def month_end(year, month):
    """The last day of the month, as (year, month, day)."""
    return (year, month, days_in(year, month))
