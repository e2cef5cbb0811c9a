from freq import word_freq


def test_word_freq():
    assert word_freq("The cat. The dog!") == {"the": 2, "cat": 1, "dog": 1}
    assert word_freq("") == {}
