RATES = {"US": 0.07, "EU": 0.02}


def rate(region):
    return RATES[region]
