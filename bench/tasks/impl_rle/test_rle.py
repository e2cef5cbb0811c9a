from rle import encode


def test_encode():
    assert encode("aaabcc") == "3a1b2c"
    assert encode("") == ""
    assert encode("x") == "1x"
