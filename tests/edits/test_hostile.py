"""Hostile input as an attacker or an unlucky user writes it: plan text, worker answers and
paths. Each regression found by fuzzing has its example here; each class of input has a
property test of its own, bounded per example."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from helpers import sr
from hypothesis import given, settings
from hypothesis import strategies as st

from conductor_lsp import PlanError, UnsafePath
from conductor_lsp.conductor import parse_plan
from conductor_lsp.edits import DEFAULT_DENY, apply_output, check_path, normalize
from conductor_lsp.edits import match as match_module
from conductor_lsp.edits.match import LineIndex, find_match
from conductor_lsp.edits.workspace import apply_output_to_disk

WORKERS = ["cheap", "strong", "tests"]
PLAN = 'model_id = [0]\nsubtasks = ["Write the fix now"]\naccess_list = ["all"]'
BOUNDED = settings(max_examples=200, deadline=timedelta(seconds=2))


def quickly(fn: object, *args: object, seconds: float = 2.0) -> object:
    """Run ``fn``; a regression guard against quadratic blow-ups (measured: 13 s and 28 s
    before the fix, under 0.3 s after), not a speed target. The bound is on this
    process's CPU time, which other work on a busy machine does not add to (wall-clock
    time did: 2 s passed beside a live eval)."""
    started = time.process_time()
    out = fn(*args)  # type: ignore[operator]
    assert time.process_time() - started < seconds
    return out


# --- plans ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "model_id = ['²']\nsubtasks = ['Write the fix now']\naccess_list = [[]]",
        "model_id = ['" + "7" * 5000 + "']\nsubtasks = ['Write the fix now']\naccess_list = [[]]",
        "model_id = [" + "9" * 5000 + "]\nsubtasks = ['Write the fix now']\naccess_list = [[]]",
    ],
)
def test_odd_worker_ids_are_plan_errors_not_tracebacks(text: str) -> None:
    with pytest.raises(PlanError, match=r"unknown worker|cannot read"):
        parse_plan(text, WORKERS)


def test_unclosed_think_tags_take_linear_time() -> None:
    text = "<think>" * 28_000  # about 200 KB
    with pytest.raises(PlanError, match="no plan found"):
        quickly(parse_plan, text, WORKERS)
    plan = quickly(parse_plan, "<think>" * 28_000 + "</think>" + PLAN, WORKERS)
    assert plan.steps[0].worker == "cheap"  # type: ignore[attr-defined]


def test_a_plan_after_dotted_capital_i_is_found() -> None:
    # "İ".lower() is two characters: offsets taken from text.lower() cut in the wrong place.
    plan = parse_plan("İİ</think>" + PLAN, WORKERS)
    assert plan.steps[0].worker == "cheap"


def test_a_very_long_access_list_is_linear() -> None:
    entries = ", ".join(["0"] * 40_000)
    lists = 'model_id = [0, 1]\nsubtasks = ["Find it now", "Write the fix"]\n'
    text = f"{lists}access_list = [[], [{entries}]]"
    plan = quickly(parse_plan, text, WORKERS)
    assert plan.steps[1].access == (0,)  # type: ignore[attr-defined]


PLAN_BITS = st.sampled_from(
    ["model_id = [", "subtasks = [", "access_list = [", "]", "[", ", ", '"all"', "[]", "0", "1",
     "'²'", "'١'", "<think>", "</think>", "İ", "\n", '{"model_id": ', "}", "9" * 30, '"x y z w"']
)  # fmt: skip


@BOUNDED
@given(st.lists(st.one_of(PLAN_BITS, st.text(max_size=6)), max_size=60).map("".join))
def test_any_plan_text_is_a_plan_or_a_plan_error(text: str) -> None:
    try:
        plan = parse_plan(text, WORKERS, tools=frozenset({"tests"}))
    except PlanError:
        return
    assert 1 <= len(plan.steps) <= 5 and plan.steps[-1].worker != "tests"
    assert all(
        s.access == "all" or all(0 <= j < i for j in s.access) for i, s in enumerate(plan.steps)
    )


# --- worker answers ------------------------------------------------------------------------


def test_a_search_longer_than_the_file_is_a_clear_no_match() -> None:
    r = apply_output({"a.py": "x = 1\n"}, sr("a.py", "x = 1\ny = 2\nz = 3\nw = 4\n", "q = 0\n"))
    assert not r.new_texts and "the file only 1" in r.report()


@pytest.mark.parametrize("spelling", ["pkg/./b.py", "pkg//b.py", "pkg\\b.py", "./pkg/b.py"])
def test_two_spellings_of_one_file_are_one_file(spelling: str) -> None:
    text = "a = 1\nb = 2\n"
    out = sr("pkg/b.py", "a = 1\n", "a = 10\n") + sr(spelling, "b = 2\n", "b = 20\n")
    r = apply_output({"pkg/b.py": text}, out)
    assert r.new_texts == {"pkg/b.py": "a = 10\nb = 20\n"}  # both edits, neither lost
    clash = sr("pkg/b.py", "a = 1\n", "a = 10\n") + sr(spelling, "a = 1\n", "a = 99\n")
    r = apply_output({"pkg/b.py": text}, clash)
    assert not r.new_texts and "overlap" in r.report()
    assert normalize("a.py/") == normalize("a.py\\") == "a.py"


def test_spellings_that_differ_only_in_case_are_refused() -> None:
    out = sr("Calc.py", "x = 1\n", "x = 2\n") + sr("calc.py", "y = 1\n", "y = 2\n")
    r = apply_output({"Calc.py": "x = 1\n", "calc.py": "y = 1\n"}, out)
    assert not r.new_texts and "name the same file where case is ignored" in r.report()


def test_fuzzy_matching_work_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the close comparison runs on a bounded number of places."""
    compared = []
    real = match_module.similarity
    monkeypatch.setattr(match_module, "similarity", lambda a, b: compared.append(1) or real(a, b))
    repetitive = "".join("    x = compute(a, b)\n    y = x + 1\n" for _ in range(1500))
    near = "".join("    x = compute(a, b)\n    y = x + 2\n" for _ in range(200))
    with pytest.raises(match_module.Ambiguous, match="many places"):
        quickly(find_match, LineIndex(repetitive), near, "z\n")
    assert len(compared) <= match_module.MAX_SCORED
    lines = [f"value_{i} = function_{i % 97}(arg_{i}, {i * 7})\n" for i in range(2000)]
    near_miss = "".join(line.replace("arg_", "argument_") for line in lines[500:800])
    compared.clear()
    with pytest.raises(match_module.NoMatch):
        quickly(find_match, LineIndex("".join(lines)), near_miss, "z\n")
    assert len(compared) <= match_module.MAX_SCORED


@BOUNDED
@given(
    st.text(st.sampled_from("ab \n\t=x(){}"), max_size=400),
    st.lists(
        st.tuples(st.sampled_from(["a.py", "./a.py", "a.py/", "b.py", "../a.py", ".git/x", ""]),
                  st.text(st.sampled_from("ab \n=x"), max_size=60),
                  st.text(max_size=30)),
        max_size=4,
    ),
)  # fmt: skip
def test_an_answer_is_applied_whole_or_not_at_all(
    text: str, blocks: list[tuple[str, str, str]]
) -> None:
    files: dict[str, str | None] = {"a.py": text, "b.py": None}
    output = "".join(sr(p, s if s.endswith("\n") or not s else s + "\n", r) for p, s, r in blocks)
    r = apply_output(files, output, targets=["a.py"])
    assert not (r.new_texts and r.failures)  # never both: nothing half applied
    if r.failures:
        assert r.new_texts == {} and r.created == set()
    assert set(r.new_texts) <= {"a.py", "b.py"}


# --- paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [".GIT/hooks/pre-commit", ".Git/config", ".git./config", "GIT~1/config", "src/.gIt/HEAD",
     ".ENV", "deploy/ID_RSA", "Secrets.json", "x/../../etc/passwd", "...", "/etc/passwd",
     "C:/Windows/x", "~/x", "a\0b", "a" * 5000 + ".py", "/".join(["d"] * 3000)],
)  # fmt: skip
def test_paths_that_must_be_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(UnsafePath):
        check_path(tmp_path, path, DEFAULT_DENY)


PATH_BITS = st.sampled_from(
    ["a", "B", ".git", ".GIT", ".git.", "GIT~1", "..", ".", "/", "\\", "//", "~", "x.py",
     ".env", "ID_RSA", " ", "C:", "\0", "é", "İ", "a" * 300]
)  # fmt: skip


@BOUNDED
@given(st.lists(PATH_BITS, min_size=1, max_size=8).map("".join))
def test_a_path_is_refused_or_lands_inside_and_outside_git(
    tmp_path_factory: pytest.TempPathFactory, path: str
) -> None:
    root = tmp_path_factory.getbasetemp() / "paths-root"
    root.mkdir(exist_ok=True)
    try:
        full = check_path(root, path, DEFAULT_DENY)
    except UnsafePath:
        return
    rel = full.relative_to(root.resolve())  # inside the workspace
    assert all(p.rstrip(". ").casefold() != ".git" for p in rel.parts)
    secret = {".env", "id_rsa", ".ssh", ".netrc"}
    assert not any(p.rstrip(". ").casefold() in secret for p in rel.parts)


def test_a_symlinked_folder_is_not_a_second_file(tmp_path: Path) -> None:
    """`link_in -> pkg`: an answer editing link_in/b.py and pkg/b.py names one file twice.
    It is refused whole (each edit would overwrite the other), and nothing is reported
    written that is not on disk."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "link_in").symlink_to(tmp_path / "pkg", target_is_directory=True)
    out = sr("link_in/b.py", "a = 1\n", "a = 10\n") + sr("pkg/b.py", "b = 2\n", "b = 20\n")
    disk = apply_output_to_disk(tmp_path, out)
    assert (
        disk.written == [] and "are the same file (through a symbolic link)" in disk.result.report()
    )
    assert (tmp_path / "pkg" / "b.py").read_text() == "a = 1\nb = 2\n"
    one = apply_output_to_disk(tmp_path, sr("link_in/b.py", "a = 1\n", "a = 10\n"))
    assert one.written == ["link_in/b.py"]  # one name is fine
    assert (tmp_path / "pkg" / "b.py").read_text() == "a = 10\nb = 2\n"
