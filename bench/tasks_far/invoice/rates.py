"""VAT rates by country, in percent."""

RATES = {"DE": 19, "FR": 20, "UK": 20, "NONE": 0}


def rate(country):
    """The rate for a country as a fraction (0.19 for 19%)."""
    return RATES.get(country, 0) / 1000
