MILES_PER_KM = 1.609


def miles_to_km(miles):
    return miles * MILES_PER_KM
