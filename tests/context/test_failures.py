"""Test output cut for a small window keeps each frame's failing line, its arguments and
the error, not the copy of the function pytest prints (``context.failures``)."""

from __future__ import annotations

from conductor_lsp.context.failures import HIDDEN, compact, condense

BETWEEN = "_ " * 40


def parser_body(n: int) -> str:
    line = "        step_{} = advance(src, pos)  # the parser's line {}\n"
    return "".join(line.format(i, i) for i in range(n))


#: pytest's section for a test that calls into the library, the frame where it failed
#: printed with its function's source (``--tb=auto``: the first and last frames long).
SECTION = (
    "_____________ TestData.test_valid [trailing-comma] _____________\n\n"
    "self = <tests.test_data.TestData testMethod=test_valid>\n\n"
    "    def test_valid(self):\n"
    "        for valid in VALID:\n"
    "            toml_str = valid.read_text()\n"
    ">           actual = tomllib.loads(toml_str)\n"
    "                     ^^^^^^^^^^^^^^^^^^^^^^^\n\n"
    "tests/test_data.py:44: \n"
    f"{BETWEEN}\n"
    "src/tomli/_parser.py:187: in loads\n"
    "    pos = key_value_rule(src, pos, out, header, parse_float)\n"
    "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    f"{BETWEEN}\n\n"
    "__s = 'arr=[1,]', parse_float = <class 'float'>\n\n"
    "    def loads(__s, *, parse_float=float):\n" + parser_body(40) + "        if char != '\\n':\n"
    ">           raise TOMLDecodeError(\n"
    "                'Expected newline or end of document', src, pos\n"
    "            )\n"
    "E           TOMLDecodeError: Expected newline or end of document (line 1, column 7)\n\n"
    "src/tomli/_parser.py:212: TOMLDecodeError"
)


def test_a_frame_past_the_test_keeps_its_failing_line_arguments_and_error() -> None:
    short = compact(SECTION)
    assert len(short) < len(SECTION) / 2
    # The failing test's own frame is whole: it shows what the test does.
    assert SECTION.split(BETWEEN)[0] in short
    # pytest's short frames stay as they are.
    assert "src/tomli/_parser.py:187: in loads\n    pos = key_value_rule(" in short
    # The long frame: its arguments, the lines just above its failing statement, the
    # statement whole, the error and where it ran; the rest is one mark.
    for kept in (
        "__s = 'arr=[1,]', parse_float = <class 'float'>",
        "the parser's line 39",
        ">           raise TOMLDecodeError(",
        "'Expected newline or end of document', src, pos",
        "E           TOMLDecodeError: Expected newline",
        "src/tomli/_parser.py:212: TOMLDecodeError",
    ):
        assert kept in short
    assert "the parser's line 5 " not in short and "def loads(" not in short
    assert short.count(HIDDEN) == 1


def test_a_section_without_long_frames_is_unchanged() -> None:
    plain = SECTION.split(f"{BETWEEN}\n\n__s")[0]
    assert compact(plain) == plain


def test_cut_test_output_keeps_the_frame_arguments_a_head_and_tail_cut_lost() -> None:
    """At a limit the whole section does not fit, the input the library failed on (the
    frame's arguments, mid-section) used to fall in the cut middle."""
    report = "$ python -m pytest -q\nFAILED (exit 1)\n- tests/test_data.py::test_valid: boom\n"
    text = condense(report + SECTION, 1200)
    assert len(text) <= 1200 + 60
    assert "__s = 'arr=[1,]'" in text and "E           TOMLDecodeError" in text
    assert "characters not shown" not in text


def test_the_first_whole_section_is_shown_not_one_the_clip_cut() -> None:
    """A test run's output keeps its head and tail (``testrun.result.clip``): the first
    section used to run on past the clip into a later failure's frames, the mark between."""
    cut_short = "_____ test_a _____\n\n    def test_a():\n>       check(1)\n\nsrc/a.py:3: in c\n"
    whole = "_____ test_b _____\n\n    def test_b():\n>       assert f(2) == 3\n"
    whole += "E       assert 4 == 3\n"
    report = "$ python -m pytest -q\nFAILED (exit 1)\n- tests/t.py::test_a: boom\n"
    text = condense(f"{report}{cut_short}... [9000 characters cut] ...\n{whole}", 2000)
    assert "E       assert 4 == 3" in text
    assert "def test_a" not in text and "characters cut" not in text
