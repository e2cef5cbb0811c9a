from pricing import order_total


def test_us():
    assert order_total(100, "US") == 107.0


def test_eu():
    assert order_total(10, "EU") == 12.0
    assert order_total(9.99, "EU") == 11.99
