from anagram import is_anagram


def test_is_anagram():
    assert is_anagram("listen", "silent")
    assert is_anagram("Dormitory", "dirty room")
    assert not is_anagram("abc", "abd")
