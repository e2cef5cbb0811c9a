from shop import price


def test_tiers():
    assert price(100, "basic") == 100
    assert price(100, "silver") == 90
    assert price(100, "gold") == 80
