from letters import count_vowels


def test_count_vowels():
    assert count_vowels("Umbrella") == 3
    assert count_vowels("xyz") == 0
