from tail import last


def test_last():
    assert last([1, 2, 3], 2) == [2, 3]
    assert last([1, 2, 3], 0) == []
    assert last([1, 2, 3], 5) == [1, 2, 3]
