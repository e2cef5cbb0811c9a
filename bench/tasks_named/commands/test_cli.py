from cli import dispatch


def test_count():
    assert dispatch("count", "one two") == 2
    assert dispatch("count", "one   two  three") == 3


def test_upper():
    assert dispatch("upper", "ab") == "AB"
