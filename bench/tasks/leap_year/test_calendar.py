from calendar_utils import days_in_year, is_leap


def test_is_leap():
    assert is_leap(2024)
    assert not is_leap(1900)
    assert is_leap(2000)
    assert not is_leap(2023)


def test_days():
    assert days_in_year(2000) == 366
