from intervals import merge


def test_merge():
    assert merge([(1, 3), (2, 6), (8, 10)]) == [(1, 6), (8, 10)]
    assert merge([(5, 7), (1, 2)]) == [(1, 2), (5, 7)]
    assert merge([]) == []
