from digits import digit_sum


def test_digit_sum():
    assert digit_sum(1234) == 10
    assert digit_sum(-56) == 11
    assert digit_sum(0) == 0
