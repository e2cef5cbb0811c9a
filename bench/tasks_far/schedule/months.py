from leap import is_leap

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in(year, month):
    if month == 2 and is_leap(year):
        return 29
    return DAYS[month - 1]
