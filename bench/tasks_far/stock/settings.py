"""Reorder settings: how many days of sales to keep in stock, per category."""

DEFAULTS = {"food": 3, "tools": 14}


def cover_days(category):
    return DEFAULTS.get(category, DEFAULTS["food"])
