from schedule import month_end


def test_month_ends():
    assert month_end(2024, 2) == (2024, 2, 29)
    assert month_end(2023, 2) == (2023, 2, 28)
    assert month_end(2000, 2) == (2000, 2, 29)


def test_century_years():
    assert month_end(1900, 2) == (1900, 2, 28)
    assert month_end(2100, 2) == (2100, 2, 28)
