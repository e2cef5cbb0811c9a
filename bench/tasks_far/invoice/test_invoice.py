from invoice import total_due


def test_total_with_vat():
    assert total_due([(2, 50.0)], "DE") == 119.0
    assert total_due([(1, 10.0), (3, 5.0)], "FR") == 30.0


def test_no_vat():
    assert total_due([(1, 9.99)], "NONE") == 9.99
