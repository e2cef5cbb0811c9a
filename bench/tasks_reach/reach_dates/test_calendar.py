from calendar_view import hours_between


def test_hours():
    assert hours_between('2026/12/02-10h00', '2026/12/02-13h30') == 3.5
    assert hours_between('2026/12/01-22h00', '2026/12/02-01h00') == 3.0
