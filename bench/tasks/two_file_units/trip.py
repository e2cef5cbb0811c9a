from units import miles_to_km


def distance_km(legs_in_miles):
    """Total distance of all legs, in km."""
    return miles_to_km(max(legs_in_miles))
