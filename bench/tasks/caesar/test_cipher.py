from cipher import shift


def test_shift():
    assert shift("abc", 1) == "bcd"
    assert shift("xyz", 3) == "abc"
    assert shift("hi there", 2) == "jk vjgtg"
