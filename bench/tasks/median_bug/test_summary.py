from summary import mean, median, spread


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_others():
    assert mean([1, 2, 3]) == 2
    assert spread([1, 5, 3]) == 4
