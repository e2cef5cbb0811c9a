from stats import max_of


def test_max_of():
    assert max_of([3, 9, 2]) == 9
    assert max_of([-5, -2, -9]) == -2
