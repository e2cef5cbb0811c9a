"""Every request fits its worker's window: the failure text, the repository map, earlier
steps and the files share one budget, cut least needed first, and the prompt says what
was cut (``context.budget``)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from conductor_lsp.context.budget import Fitted, Size, WindowError, fit_window
from conductor_lsp.context.failures import condense
from conductor_lsp.context.window import CHARS_PER_TOKEN, WINDOW_SPARE, fit_task
from conductor_lsp.plan import Plan, Step
from conductor_lsp.runtime.requests import build_request
from conductor_lsp.runtime.results import StepResult
from conductor_lsp.task import FileContext, Task

CONTEXT, MAX_TOKENS = 4096, 1024


def failures(n: int) -> str:
    """A report of ``n`` failures of one kind, pytest's sections after the list."""
    wrong = "assert '1.{i}' == '1.{j}'"
    listed = [
        f"- test_v.py::test_bump_{i} at test_v.py:{10 + i}: AssertionError: "
        + wrong.format(i=i, j=i + 1)
        for i in range(n)
    ]
    sections = [
        f"____ test_bump_{i} ____\n\n    def test_bump_{i}():\n"
        f">       assert bump('1.{i}') == '1.{i + 1}'\n"
        f"E       AssertionError: {wrong.format(i=i, j=i + 1)}\n\n"
        f"test_v.py:{10 + i}: AssertionError\n" + "x = 1\n" * 60
        for i in range(n)
    ]
    return "\n".join(["$ python -m pytest -q", "FAILED (exit 1)", *listed, *sections])


def big_file(n: int = 300) -> str:
    return "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(n))


def sizes(task: Task, plan: Plan, i: int, results: list[StepResult]) -> Size:
    def size(t: Task, seen: Mapping[int, str]) -> int:
        r = build_request(t, plan, i, results, seen=seen)
        return len(r.system) + sum(len(p.text) for p in r.parts)

    return size


def fitted_in(task: Task, limit: int) -> Fitted:
    """``task`` fitted for one step's request within ``limit`` characters."""
    plan = Plan((Step("b", "fix it"),))
    return fit_window(task, {}, sizes(task, plan, 0, [StepResult(0, plan.steps[0])]), limit)


def test_everything_shares_one_budget_and_the_prompt_says_what_was_cut() -> None:
    """The case that overflowed: 23 failures in 18,000+ characters of output, a 5,000
    character map, a big file and an earlier step, for a 4096-token window."""
    task = Task(
        "Fix bump.",
        (
            FileContext("version.py", big_file()),
            FileContext("test_v.py", "x = 1\n" * 50, editable=False),
        ),
        test_failures=failures(23),
        repo_map="mod.py: def g()\n" * 320,
        previous="tried something\n" * 200,
    )
    plan = Plan((Step("a", "analyse", (), "analysis"), Step("b", "fix it", (0,))))
    results = [
        StepResult(0, plan.steps[0], text="an analysis " * 900),
        StepResult(1, plan.steps[1]),
    ]
    size = sizes(task, plan, 1, results)
    room = CONTEXT - MAX_TOKENS - WINDOW_SPARE
    limit = int(room * CHARS_PER_TOKEN)
    assert size(task, {0: results[0].text}) > 3 * limit  # far over
    fitted = fit_window(task, {0: results[0].text}, size, room)
    request = build_request(fitted.task, plan, 1, results, seen=fitted.steps)
    chars = len(request.system) + sum(len(p.text) for p in request.parts)
    assert chars <= limit and chars / CHARS_PER_TOKEN + MAX_TOKENS <= CONTEXT
    text = "\n".join(p.text for p in request.parts)
    # the first failure's traceback and assertion come first; the rest in one line
    assert "assert bump('1.0') == '1.1'" in text and "(and 22 more like this)" in text
    assert "test_bump_5 ____" not in text
    assert "## Not shown (your window is too small for all of it)" in text
    assert "the test output" in fitted.task.cut and "version.py" in fitted.task.cut


def test_a_request_that_fits_is_sent_as_it_is() -> None:
    task = Task("Fix it.", (FileContext("a.py", "x = 1\n"),), test_failures=failures(2))
    plan = Plan((Step("a", "fix"),))
    results = [StepResult(0, plan.steps[0])]
    fitted = fit_window(
        task, {}, sizes(task, plan, 0, results), CONTEXT - MAX_TOKENS - WINDOW_SPARE
    )
    assert fitted.task is task and not fitted.cut and "Not shown" not in task.render()


def test_a_window_too_small_for_the_subtask_alone_is_an_error_not_an_overflow() -> None:
    task = Task("Fix it.", (FileContext("a.py", big_file()),), test_failures=failures(3))
    plan = Plan((Step("a", "fix " * 2000),))
    results = [StepResult(0, plan.steps[0])]
    with pytest.raises(WindowError, match="the window holds"):
        fit_window(task, {}, sizes(task, plan, 0, results), 1024 - 256 - WINDOW_SPARE)


def test_repeated_failures_read_as_one_line_each_kind() -> None:
    text = condense(failures(23), 3000)
    assert text.startswith("$ python -m pytest -q\nFAILED (exit 1)\n")
    assert text.count("(and 22 more like this)") == 1 and len(text) <= 3100
    assert "E       AssertionError: assert '1.0' == '1.1'" in text


def test_a_counted_window_fits_by_the_count_not_the_estimate() -> None:
    """A model in process counts: text denser than 3 characters a token (2 here) passes
    a fit by the estimate whole and overflows; the count cuts until it fits."""
    room = CONTEXT - MAX_TOKENS - 64
    failed = "- test_v.py::test_f5 at version.py:22: assert 6 == 7\n"
    n = next(n for n in range(50, 400, 5) if len(big_file(n)) > 2.2 * room)
    task = Task("Fix f5.", (FileContext("version.py", big_file(n)),), test_failures=failed)
    plan = Plan((Step("a", "fix it"),))
    results = [StepResult(0, plan.steps[0])]
    size = sizes(task, plan, 0, results)

    def tokens(t: Task, seen: Mapping[int, str]) -> int:
        return size(t, seen) // 2

    estimated = fit_window(task, {}, size, room)
    assert estimated.task is task and tokens(task, {}) > room  # the estimate is short here
    counted = fit_window(task, {}, size, room, tokens)
    assert tokens(counted.task, counted.steps) <= room and counted.task.files[0].partial
    assert "return x + 5" in counted.task.files[0].text  # the function the failure names


def test_the_shown_code_follows_every_failures_traceback_not_only_the_one_kept() -> None:
    """The test output is cut to its first failure's traceback before the files are cut;
    what the files show is still chosen from all of it: here only the second failure's
    traceback goes through the library, at ``f150``."""
    code = big_file()
    line = code.splitlines().index("    return x + 150") + 1
    first = "____ test_a ____\n>       assert 1 == 2\nE       AssertionError\n\ntest_v.py:3: E\n"
    second = (
        "____ test_b ____\n>       g()\n\n"
        f"lib.py:{line}: in f150\n    return x + 150\nE       TypeError: boom\n"
    )
    output = first + "x = 1\n" * 300 + second
    task = Task(
        "Fix it.",
        (FileContext("lib.py", code), FileContext("test_v.py", "x = 1\n" * 50, editable=False)),
        test_failures="$ python -m pytest -q\nFAILED (exit 1)\n- test_v.py::test_a at test_v.py:3: "
        "AssertionError\n- test_v.py::test_b at test_v.py:9: TypeError: boom\n" + output,
    )
    plan = Plan((Step("b", "fix it"),))
    size = sizes(task, plan, 0, [StepResult(0, plan.steps[0])])
    fitted = fit_window(task, {}, size, 1500)
    lib = next(f for f in fitted.task.files if f.path == "lib.py")
    assert "lib.py:" not in fitted.task.test_failures.split("____ test_a")[-1][:400]
    assert lib.partial and "return x + 150" in lib.text
    assert f"f150 (in the traceback, line {line})" in lib.why


def test_of_the_code_files_those_the_failures_reach_are_kept_longest() -> None:
    """Left out first: a test file, then a code file nothing failing reaches, found last
    or not; kept: the one defining what the failing test calls."""
    called = "def target(x):\n    return x  # TARGET_BODY\n" + big_file(200)
    tests = "from lib import target\n\n\ndef test_t():\n    assert target(1) == 2\n"
    task = Task(
        "Fix it.",
        (
            FileContext("other.py", big_file(200)),
            FileContext("lib.py", called),
            FileContext("unrelated.py", big_file(200)),
            FileContext("test_t.py", tests, editable=False),
        ),
        test_failures="$ pytest\nFAILED (exit 1)\n- test_t.py::test_t at test_t.py:5: assert\n",
    )
    fitted = fitted_in(task, 500)
    kept = [f.path for f in fitted.task.files]
    assert kept == ["lib.py"] and "TARGET_BODY" in fitted.task.files[0].text


def test_a_code_file_defining_what_a_frame_called_is_kept_before_one_merely_named() -> None:
    """The parser fails on what the lexer made: no traceback line is in the lexer and no
    test calls it, yet it is the file to keep; ``other.py`` is only named in the output."""
    parser = "from lexer import tokenize\n\n\ndef parse(s):\n    return tokenize(s)[0]\n"
    lexer = "def tokenize(s):\n    return s  # TOKENIZE_BODY\n" + big_file(200)
    task = Task(
        "Fix it.",
        (
            FileContext("parser.py", parser),
            FileContext("other.py", big_file(200)),
            FileContext("lexer.py", lexer),  # found last, and still kept
        ),
        test_failures=(
            "$ pytest\nFAILED (exit 1)\n- test_p.py::test_p at test_p.py:5: IndexError\n"
            '  File "parser.py", line 5, in parse\nIndexError: other.py\n'
        ),
    )
    fitted = fitted_in(task, 600)
    kept = [f.path for f in fitted.task.files]
    assert kept == ["parser.py", "lexer.py"], kept
    assert "TOKENIZE_BODY" in fitted.task.files[1].text


def test_the_file_writing_a_message_the_failures_print_is_kept_like_a_frames() -> None:
    """The test catches the error and compares its text: no frame is left in
    ``errors.py``, whose ``__str__`` wrote the wrong message; it is kept before a file
    that only defines what a frame called (each was needed alike, and the one found
    last, the message's, went first)."""
    parser = "from helpers import advance\n\n\ndef parse(s):\n    return advance(s)[0]\n"
    helpers = "def advance(s):\n    return s\n" + big_file(200)
    errors = (
        "class ParseError(ValueError):\n    def __str__(self):\n"
        "        return 'Invalid expression: incomplete at column %s' % self.column"
        "  # STR_BODY\n" + big_file(200)
    )
    task = Task(
        "Fix it.",
        (
            FileContext("parser.py", parser),
            FileContext("helpers.py", helpers),
            FileContext("errors.py", errors),
        ),
        test_failures=(
            "$ pytest\nFAILED (exit 1)\n- test_p.py::test_p at test_p.py:5: AssertionError\n"
            '  File "parser.py", line 5, in parse\n'
            "AssertionError: 'Invalid expression: incomplete at column 4' != 'at column 5'\n"
        ),
    )
    fitted = fitted_in(task, 700)
    kept = [f.path for f in fitted.task.files]
    assert kept == ["parser.py", "errors.py"], kept
    assert "STR_BODY" in fitted.task.files[1].text


def test_a_file_past_the_render_cap_still_fits_a_small_window() -> None:
    """A file longer than ``MAX_FILE_CHARS``, rendered cut at it, was mis-measured: its
    share came out bigger than the window and the request could not be sent."""
    from conductor_lsp.task import MAX_FILE_CHARS

    code = big_file(2500) + "def wanted(x):\n    return x - 1  # THE_BUG\n" + big_file(500)
    assert len(code) > MAX_FILE_CHARS
    line = code.splitlines().index("    return x - 1  # THE_BUG") + 1
    task = Task(
        "Fix it.",
        (FileContext("lib.py", code),),
        test_failures=f"$ pytest\nFAILED (exit 1)\n- t.py::test_w at t.py:3: E\n"
        f'  File "lib.py", line {line}, in wanted\n'
        + " ".join(f"f{i}" for i in range(0, 2500, 5)),  # many names: a share to fill
    )
    plan = Plan((Step("b", "fix it"),))
    size = sizes(task, plan, 0, [StepResult(0, plan.steps[0])])
    fitted = fit_window(task, {}, size, CONTEXT - MAX_TOKENS - WINDOW_SPARE)
    assert size(fitted.task, {}) <= (CONTEXT - MAX_TOKENS - WINDOW_SPARE) * CHARS_PER_TOKEN
    assert "THE_BUG" in fitted.task.files[0].text


@pytest.mark.parametrize(("files", "room"), [(8, 600), (12, 800), (24, 1000), (24, 1200)])
def test_many_files_and_the_words_saying_so_still_fit(files: int, room: int) -> None:
    """The "Not shown" note named every file left out and came on top of what was
    fitted: with many files it alone pushed a request over (it was refused, never
    sent). It names five and says how many more, and what is still over comes off the
    files."""
    task = Task(
        "Fix it.",
        tuple(
            FileContext(f"pkg/a_rather_long_module_name_{i}_for_the_note.py", big_file(60))
            for i in range(files)
        ),
        test_failures=failures(3),
    )
    plan = Plan((Step("b", "fix it"),))
    size = sizes(task, plan, 0, [StepResult(0, plan.steps[0])])
    fitted = fit_window(task, {}, size, room)
    assert size(fitted.task, {}) <= room * CHARS_PER_TOKEN
    assert "more" in fitted.task.cut or len(fitted.task.files) == files


def test_files_shown_in_part_fit_the_limit_their_headers_included() -> None:
    """Each file in part says which definitions it shows and why; those words count in
    its share, or the files together went over and whole files went one by one until a
    single file was left, the request a third full."""
    code = big_file(150)
    tests = "".join(f"def test_f{i}():\n    assert f{i}(1) == {i + 1}\n\n\n" for i in range(150))
    files = tuple(FileContext(f"lib{k}.py", code) for k in range(5))
    task = Task(
        "Fix it.",
        (*files, FileContext("test_lib.py", tests, editable=False)),
        test_failures="$ pytest\nFAILED (exit 1)\n"
        + "".join(
            f"- test_lib.py::test_f{i} at test_lib.py:{4 * i + 2}: assert\n" for i in range(40)
        ),
    )
    for limit in (6000, 12000, 20000):
        fitted = fit_task(task, limit)
        assert any(f.partial for f in fitted.files)
        assert len(fitted.render()) <= limit, limit


def test_where_every_file_would_get_a_sliver_fewer_files_get_more() -> None:
    """Eight big code files in part within a 4096-token window would get a few hundred
    characters each, each its head; the least needed go whole first, and the file the
    traceback goes through shows its function."""
    files = [FileContext(f"other{k}.py", big_file(300)) for k in range(7)]
    fitted = fitted_beside(files, [])
    kept = [f.path for f in fitted.task.files]
    assert "lib.py" in kept and len(kept) < 5, kept
    shown = next(f for f in fitted.task.files if f.path == "lib.py")
    assert "return x + 150" in shown.text
    assert "the files other" in fitted.task.cut


def test_a_file_the_failures_do_not_reach_stays_while_the_one_they_reach_shows_all_it_wants() -> (
    None
):
    """``lib.py`` is shown in part with the one function the traceback names; with room
    to spare the helper modules stay (a file in part that shows all it wants is not short
    of room: leaving them out sent a request a seventh full)."""
    helpers = [
        FileContext(f"helper{k}.py", big_file(20).replace("def f", "def h")) for k in range(2)
    ]
    fitted = fitted_beside([], helpers)
    assert [f.path for f in fitted.task.files] == ["lib.py", "helper0.py", "helper1.py"]
    assert "return x + 150" in fitted.task.files[0].text


def fitted_beside(before: list[FileContext], after: list[FileContext]) -> Fitted:
    """A 300-function ``lib.py`` whose ``f150`` a traceback names, between other files,
    fitted to a 4096-token window."""
    lib = big_file(300)
    line = lib.splitlines().index("    return x + 150") + 1
    task = Task(
        "Fix it.",
        (*before, FileContext("lib.py", lib), *after),
        test_failures=(
            "$ pytest\nFAILED (exit 1)\n- test_l.py::test_l at test_l.py:5: TypeError\n"
            f'  File "lib.py", line {line}, in f150\nTypeError: boom\n'
        ),
    )
    plan = Plan((Step("b", "fix it"),))
    size = sizes(task, plan, 0, [StepResult(0, plan.steps[0])])
    return fit_window(task, {}, size, CONTEXT - MAX_TOKENS - WINDOW_SPARE)
