from pipeline import clean


def test_clean():
    assert clean("  Hello   World  ") == "hello world"
