from cart import label


def test_label():
    assert label('shirt', 'L') == 'SHI-L shirt'
    assert label('hat', 's') == 'HAT-S hat'
