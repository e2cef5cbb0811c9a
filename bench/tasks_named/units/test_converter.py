from converter import convert


def test_feet():
    assert convert(10, "ft") == 3.048


def test_others():
    assert convert(2, "km") == 2000
    assert convert(10, "in") == 0.254
