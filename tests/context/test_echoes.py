"""An earlier step's answer shown to a later step without the read-only files' code it
copied: what a small model's analysis pastes as "the corrected code"."""

from __future__ import annotations

import pytest
from helpers import standin_workers
from standin import Seen, StandIn

from conductor_lsp import FileContext, Plan, Session, Step, Task, load_config
from conductor_lsp.context.echoes import without_copies

TESTS = (
    "from calc import *\n\n"
    "def check(candidate):\n"
    "    assert candidate(2, 2) == 4\n"
    "    assert candidate(1, 5) == 6\n"
    "    assert candidate(0, 0) == 0\n\n"
    "def test_add():\n"
    "    check(add)\n"
)
CODE = "def add(a, b):\n    return a - b\n"
FILES = (FileContext("test_calc.py", TESTS, editable=False), FileContext("calc.py", CODE))


def fenced(body: str, lang: str = "python") -> str:
    return f"```{lang}\n{body}```"


def test_a_block_of_the_test_files_functions_is_left_out_and_the_words_kept() -> None:
    echo = "from calc import *\n\ndef check(candidate):\n    return candidate(2, 2)\n"
    echo += "\ndef test_add():\n    check(add)\n"
    answer = f"The bug: add subtracts.\n\nHere's the corrected code:\n\n{fenced(echo)}\n\nDone."
    shown = without_copies(answer, FILES)
    assert "def check" not in shown and "def test_add" not in shown and "```" not in shown
    assert "a copy of the read-only `test_calc.py`'s definitions" in shown
    assert shown.startswith("The bug: add subtracts.") and shown.endswith("Done.")


def test_a_fix_beside_a_copied_test_keeps_the_fix() -> None:
    body = "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    shown = without_copies("calc.py\n" + fenced(body), FILES)
    assert "return a + b" in shown and "def test_add" not in shown
    assert "# (left out: test_add, the read-only test_calc.py's; not to be changed)" in shown
    assert shown.startswith("calc.py\n```python\n") and shown.rstrip().endswith("```")


def test_a_block_of_the_test_files_lines_is_left_out() -> None:
    lines = (
        "assert candidate(2, 2) == 4\nassert candidate(1, 5) == 6\nassert candidate(0, 0) == 0\n"
    )
    shown = without_copies(fenced(lines), FILES)
    assert "candidate(1, 5)" not in shown
    assert "a copy of the read-only `test_calc.py`'s lines" in shown


@pytest.mark.parametrize(
    "answer",
    [
        fenced("def add(a, b):\n    return a + b\n"),  # the file under repair's code
        fenced("def add(a, b:\n    return a + b\n"),  # does not parse, copies nothing
        "No code at all: add subtracts where it should add.",
        # a fence not closed on a line of its own holds no block
        fenced("def check(candidate):\n    pass\n", "text") + " in words",
    ],
)
def test_answers_that_copy_no_read_only_file_are_shown_as_they_are(answer: str) -> None:
    assert without_copies(answer, FILES) == answer


def test_with_no_read_only_file_nothing_is_left_out() -> None:
    answer = fenced("def check(candidate):\n    pass\n")
    assert without_copies(answer, (FileContext("calc.py", CODE),)) == answer


def test_leaving_out_is_idempotent() -> None:
    body = "def add(a, b):\n    return a + b\n\n\ndef check(candidate):\n    pass\n"
    once = without_copies(fenced(body), FILES)
    assert without_copies(once, FILES) == once


@pytest.mark.parametrize("window", [None, 4096])
async def test_the_later_step_sees_the_answer_without_the_copy_and_the_answer_is_kept(
    tmp_path: object, standin: StandIn, keys: dict[str, str], window: int | None
) -> None:
    """Through the engine, with and without a window to fit: the change step's request
    holds the analysis less the test file's functions it pasted; the analysis itself is
    recorded as written."""
    echo = "Add subtracts.\n\n" + fenced(
        "def check(candidate):\n    return 4\n\ndef test_add():\n    check(add)\n"
    )

    def answer(seen: Seen) -> str:
        return (
            echo
            if "Your subtask (analysis)" in seen.prompt()
            else "calc.py\n" + fenced("def add(a, b):\n    return a + b\n")
        )

    standin.responder = answer
    workers = standin_workers(standin.url)
    if window:
        workers = {n: {**w, "context": window, "max_tokens": 256} for n, w in workers.items()}
    config = load_config(
        tmp_path,  # type: ignore[arg-type]
        overrides={"conductor": {"backend": "static"}, "workers": workers},
    )
    plan = Plan(
        (
            Step("gpt", "Find the cause", (), "analysis"),
            Step("gpt", "Write it", (0,), "generation"),
        ),
        source="test",
    )
    async with Session(config) as session:
        result = await session.run(Task("Fix add", files=FILES), plan=plan)
    assert result.steps[0].text == echo
    later = standin.seen[1].prompt()
    assert "Add subtracts." in later and "a copy of the read-only `test_calc.py`" in later
    assert "return 4" not in later
