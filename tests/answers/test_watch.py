"""Generation cut short where it goes round in a loop or past the code it was asked for, and
code that does not parse named as such: the pure checks, then a looping loopback server
through a real ``run`` job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli, config, worker
from hypothesis import given
from hypothesis import strategies as st
from standin import Behaviour, StandIn

from conductor_lsp.answers import AnswerWatch, code_problems

CODE = "```python\ndef reverse(s):\n    return s[::-1]\n```\n"
LOOP_LINE = "The output of the above code will be:"


def fed(watch: AnswerWatch, text: str, size: int = 3) -> str:
    for i in range(0, len(text), size):
        if watch.feed(text[i : i + size]):
            break
    return watch.reason


def test_the_same_line_again_and_again_is_a_loop_kept_once() -> None:
    watch = AnswerWatch()
    reason = fed(watch, "Here it is.\n" + f"{LOOP_LINE}\n" * 40)
    assert reason.startswith("loop: the same line 4 times in a row")
    assert watch.cut() == f"Here it is.\n{LOOP_LINE}\n"


def test_two_lines_going_round_and_a_run_with_no_newline_are_loops() -> None:
    two = "".join(f"print('the first of two lines {i % 2}')\n" for i in range(40))
    assert fed(AnswerWatch(), two).startswith("loop: the same")
    assert fed(AnswerWatch(), "and then " * 200).startswith("loop: the same 9 characters")


def test_honest_code_that_repeats_short_lines_is_not_a_loop() -> None:
    code = "".join(
        f"def f{i}(x):\n    if x:\n        return x\n    return None\n\n" for i in range(30)
    )
    watch = AnswerWatch()
    assert fed(watch, code) == "" and watch.cut() == code


def test_code_asked_for_ends_with_its_block() -> None:
    watch = AnswerWatch(code=True)
    assert fed(watch, "Sure:\n" + CODE + "The output of the above code will be: 'olleh'") == (
        "done: the answer's code block ended"
    )
    assert watch.cut() == "Sure:\n" + CODE
    assert fed(AnswerWatch(), "Sure:\n" + CODE + "More prose.\n") == ""  # not asked: goes on


@given(st.text(max_size=300))
def test_any_text_is_kept_whole_or_cut_to_a_prefix(text: str) -> None:
    watch = AnswerWatch(code=True)
    fed(watch, text, 7)
    assert text.startswith(watch.cut().rstrip("\n"))


def test_code_that_does_not_parse_is_named_with_its_line() -> None:
    broken = "Here:\n```python\ndef reverse(s):\n    out = s[::-1\n    return out\n```\n"
    assert code_problems(broken) == [
        "the answer's code does not parse: line 4, '[' was never closed"
    ]
    assert code_problems(CODE) == []
    assert code_problems("```sh\nls -l (\n```\n") == []  # not Python
    edit = (
        "```python\ncalc.py\n<<<<<<< SEARCH\n    return a -\n=======\n"
        "    return a +\n>>>>>>> REPLACE\n```"
    )
    assert code_problems(edit) == []  # an edit holds fragments
    assert code_problems("```python\ndef f(:\n")[0].startswith(
        "the answer's code does not parse: line 2"
    )


# --- through a real job ----------------------------------------------------------------------


@pytest.fixture
def looping(tmp_path: Path) -> tuple[StandIn, Path]:
    standin = StandIn().start()
    ws = tmp_path / "ws"
    ws.mkdir()
    stream = worker("coder", standin.url) + "stream = true\n"
    (ws / "conductor.toml").write_text(config('backend = "static"', stream, tests=False))
    yield standin, ws
    standin.stop()


def test_a_looping_stream_is_cut_short_and_the_job_says_so(
    looping: tuple[StandIn, Path],
) -> None:
    """The server would send 20,000 copies of one line; the worker hangs up after a few,
    keeps one copy, is billed for what it read, and the job's output says why it stopped."""
    standin, ws = looping
    standin.push(Behaviour("loop", text=f"I wrote it.\n{LOOP_LINE}\n"))
    out = cli("run", "Write a Python function that reverses a string", cwd=ws)
    assert out.returncode == 0, out.stderr
    assert "cut short, loop: the same line 4 times in a row" in out.stdout
    # The server was hung up on long before its 20,000 lines (how many it wrote into the
    # socket first depends on the machine's load; what the worker read and billed does not).
    assert standin.loop_sent < StandIn.LOOP_LINES
    standin.push(Behaviour("loop", text=f"I wrote it.\n{LOOP_LINE}\n"))
    data = json.loads(cli("run", "--json", "Write it again", cwd=ws).stdout)
    step = data["steps"][0]
    # Billed for what it read: "I ", "wrote ", "it.\n", the line's first copy word by word
    # (7 pieces), then three more copies whole: 13 pieces, of 20,000 lines sent.
    assert step["cut"].startswith("loop:") and step["output_tokens"] == 13
    assert data["output"].count(LOOP_LINE) == 1
    assert data["problems"] == [f"step 0's answer was cut short, {step['cut']}"]


def test_an_unparsable_answer_is_reported_beside_it(looping: tuple[StandIn, Path]) -> None:
    standin, ws = looping
    broken = "```python\ndef reverse(s):\n    out = s[::-1\n    return out\n```\n"
    standin.push(Behaviour(text=broken + "The output of the above code will be: 'cba'"))
    out = cli("run", "Write a Python function that reverses a string", cwd=ws)
    assert "warning: the answer's code does not parse: line 3, '[' was never closed" in out.stdout
    assert "The output of the above code" not in out.stdout  # cut at the block's end
    standin.push(Behaviour(text=broken))
    data = json.loads(cli("run", "--json", "Write it", cwd=ws).stdout)
    assert data["problems"] == ["the answer's code does not parse: line 3, '[' was never closed"]
    assert "SmolLM2" not in out.stdout  # the smoke-test note is for the default pool only
