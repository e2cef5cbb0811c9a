from grades import letter


def test_letter():
    assert letter(95) == "A"
    assert letter(90) == "A"
    assert letter(80) == "B"
    assert letter(70) == "C"
    assert letter(69) == "F"
