from shop import price_after, total


def test_price_after():
    assert price_after(100, 25) == 75
    assert price_after(19.99, 0) == 19.99


def test_total():
    assert total([10, 20], 50) == 15
