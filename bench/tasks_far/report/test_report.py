from report import summary


def test_summary():
    assert summary([1, 2, 4], 2) == {"mean": 2.33, "pass_rate": 66.7}


def test_empty():
    assert summary([], 0) == {"mean": 0.0, "pass_rate": 0.0}
