from config_parse import parse


def test_parse():
    assert parse("a = 1\n# note\n\nb=two") == {"a": "1", "b": "two"}
    assert parse("url = http://x?a=b") == {"url": "http://x?a=b"}
