RATES = {'EU': 0.2, 'US': 0.08}
REDUCED = {'EU': 0.1, 'US': 0.02}


def rate_for(region: str, reduced: bool = False) -> float:
    table = REDUCED if reduced else RATES
    return table.get(region, 0.0)
