from shop import checkout, checkout_reduced


def test_reduced():
    assert checkout_reduced([10, 20], 'EU') == 33.0
    assert checkout_reduced([50], 'US') == 51.0


def test_full_unchanged():
    assert checkout([10, 20], 'EU') == 36.0
