from trip import distance_km


def test_distance():
    assert round(distance_km([1, 2]), 3) == 4.828
    assert distance_km([]) == 0
