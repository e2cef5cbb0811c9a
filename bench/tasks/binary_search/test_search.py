from search import contains, find


def test_find():
    assert find([1, 3, 5, 7], 7) == 3
    assert find([1, 3, 5, 7], 1) == 0
    assert find([1, 3, 5, 7], 4) == -1
    assert find([2], 2) == 0


def test_contains():
    assert contains([1, 2, 3], 3)
