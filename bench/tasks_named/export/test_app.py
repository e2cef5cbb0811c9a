from app import export


def test_csv():
    assert export([["a", "b"], ["c", "d,e"]], "csvfmt") == 'a,b\nc,"d,e"'


def test_tsv():
    assert export([["a", "b"]], "tsvfmt") == "a\tb"
