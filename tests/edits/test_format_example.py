"""The edit format's example cannot be taken for an answer."""

from __future__ import annotations

import pytest

from conductor_lsp.edits import apply_output
from conductor_lsp.edits.format import edit_instructions

CALC = "def add(a, b):\n    return a - b\n"


@pytest.mark.parametrize("longest", [10, 400], ids=["whole-file", "blocks"])
def test_an_answer_that_repeats_the_example_is_refused_as_such(longest: int) -> None:
    """The strongest worker once answered with the system prompt's example block word for
    word: it read "SEARCH text not found". The refusal now says what happened."""
    example = edit_instructions("calc.py", longest).split("for example:\n\n", 1)[1]
    answer = example.split("\n\n", 1)[0] + "\n"  # the example, copied as it stands
    result = apply_output({"calc.py": CALC}, answer, targets=["calc.py"])
    assert not result.ok and not result.new_texts
    assert "repeats the format's example" in result.report(), result.report()
    assert "not found" not in result.report()


def test_an_answer_with_real_lines_is_not_taken_for_the_example() -> None:
    answer = (
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    )
    result = apply_output({"calc.py": CALC}, answer, targets=["calc.py"])
    assert result.ok and result.new_texts["calc.py"] == CALC.replace("a - b", "a + b")
