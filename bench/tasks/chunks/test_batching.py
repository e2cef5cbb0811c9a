from batching import chunks


def test_chunks():
    assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert chunks([], 3) == []
