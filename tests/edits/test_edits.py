"""The pure edits API: parse, match, apply. No I/O."""

from __future__ import annotations

import pytest
from helpers import sr
from hypothesis import given, settings
from hypothesis import strategies as st

from conductor_lsp.edits import apply_output, no_edit, parse_edits

CALC = (
    "def add(a, b):\n"
    "    return a - b\n"
    "\n"
    "\n"
    "class Shape:\n"
    "    def area(self):\n"
    "        w = self.w\n"
    "        h = self.h\n"
    "        return w + h\n"
    "\n"
    "    def name(self):\n"
    "        return 'shape'\n"
)


def test_exact_search_replace() -> None:
    r = apply_output({"calc.py": CALC}, sr("calc.py", "    return a - b\n", "    return a + b\n"))
    assert r.ok and r.matches == ["exact"]
    assert r.new_texts["calc.py"] == CALC.replace("a - b", "a + b")


def test_fenced_blocks_several_files_and_markdown_paths() -> None:
    out = (
        "I will fix both.\n\n### `calc.py`\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n"
        "    return a + b\n>>>>>>> REPLACE\n```\n\nAnd the other file:\n\n**util.py**\n```python\n"
        "<<<<<<< SEARCH\nX = 1\n=======\nX = 2\n>>>>>>> REPLACE\n```\n"
    )
    r = apply_output({"calc.py": CALC, "util.py": "X = 1\n"}, out)
    assert r.ok, r.report()
    assert r.new_texts == {"calc.py": CALC.replace("a - b", "a + b"), "util.py": "X = 2\n"}


def test_paths_small_models_write_around_a_whole_file() -> None:
    """Seen in the real pair's answers on multi-file tasks: the path in bold with a label
    above the block, or as the block's first comment line; both name the file."""
    files = {"calc.py": CALC, "util.py": "X = 1\n"}
    for out in (
        "**File `util.py`:**\n```python\nX = 2\n```\n",
        "**File `util.py`**\n```python\nX = 2\n```\n",
        "```python\n# util.py\nX = 2\n```\n",
    ):
        r = apply_output(files, out)
        assert r.ok, (out, r.report())
        assert r.new_texts == {"util.py": "X = 2\n"}, out
    # A comment that names no file stays part of the code (and the block stays path-less).
    for comment in ("# set X", "# e.g.", "# v1.2"):
        r = apply_output(files, f"```python\n{comment}\nX = 2\n```\n")
        assert not r.ok and not r.new_texts, comment


def test_reindented_search_is_reindented_back() -> None:
    search = "def area(self):\n    w = self.w\n    h = self.h\n    return w + h\n"
    replace = "def area(self):\n    return self.w * self.h\n"
    r = apply_output({"calc.py": CALC}, sr("calc.py", search, replace))
    assert r.ok and r.matches == ["indent"]
    assert (
        "    def area(self):\n        return self.w * self.h\n\n    def name"
        in r.new_texts["calc.py"]
    )


def test_trailing_whitespace_tolerated() -> None:
    r = apply_output(
        {"calc.py": CALC}, sr("calc.py", "    return a - b   \n", "    return a + b\n")
    )
    assert r.ok and r.matches == ["whitespace"]


def test_fuzzy_match_when_unique_and_close() -> None:
    search = (
        "    def area(self):\n        w = self.w\n        h = self.height\n        return w + h\n"
    )
    replace = "    def area(self):\n        return self.w * self.h\n"
    r = apply_output({"calc.py": CALC}, sr("calc.py", search, replace))
    assert r.ok and r.matches[0].startswith("fuzzy(")
    assert "return self.w * self.h" in r.new_texts["calc.py"]


def test_no_match_quotes_closest_lines() -> None:
    r = apply_output({"calc.py": CALC}, sr("calc.py", "def sub(a, b):\n    return a * b\n", "x\n"))
    assert not r.ok and not r.new_texts
    msg = r.report()
    assert "not found" in msg and "Did you mean" in msg and "return a - b" in msg


def test_ambiguous_is_refused_never_first_match() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    r = apply_output({"a.py": text}, sr("a.py", "x = 1\n", "x = 3\n"))
    assert not r.ok and "occurs 2 times (at lines 1, 3)" in r.report()
    r = apply_output({"a.py": "    x = 1\nx = 1\n"}, sr("a.py", "  x = 1\n", "x = 3\n"))
    assert not r.ok and "matches at lines 1, 2" in r.report()


def test_one_bad_edit_means_no_file_changes() -> None:
    out = sr("calc.py", "    return a - b\n", "    return a + b\n") + sr("calc.py", "nope\n", "x\n")
    r = apply_output({"calc.py": CALC}, out)
    assert not r.new_texts and len(r.failures) == 1


def test_overlapping_edits_are_refused() -> None:
    out = sr("calc.py", "def add(a, b):\n    return a - b\n", "x\n") + sr(
        "calc.py", "    return a - b\n", "y\n"
    )
    r = apply_output({"calc.py": CALC}, out)
    assert not r.ok and "overlap" in r.report()


def test_crlf_and_missing_final_newline_are_kept() -> None:
    text = "a = 1\r\nb = 2\r\nc = 3"
    r = apply_output({"x.py": text}, sr("x.py", "b = 2\n", "b = 20\n"))
    assert r.new_texts["x.py"] == "a = 1\r\nb = 20\r\nc = 3"
    r = apply_output({"x.py": text}, sr("x.py", "c = 3\n", "c = 30\n"))
    assert r.new_texts["x.py"] == "a = 1\r\nb = 2\r\nc = 30"


def test_unified_diff() -> None:
    diff = (
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
        "+    return a + b\n"
    )
    r = apply_output({"calc.py": CALC}, f"```diff\n{diff}```\n")
    assert r.ok, r.report()
    assert r.new_texts["calc.py"] == CALC.replace("a - b", "a + b")


def test_diff_line_number_breaks_a_tie() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    diff = "--- a/a.py\n+++ b/a.py\n@@ -3,1 +3,1 @@\n-x = 1\n+x = 9\n"
    r = apply_output({"a.py": text}, diff)
    assert r.new_texts["a.py"] == "x = 1\ny = 2\nx = 9\n"


def test_new_files_by_diff_whole_file_and_empty_search() -> None:
    diff = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+A = 1\n+B = 2\n"
    r = apply_output({"pkg/new.py": None}, diff)
    assert r.new_texts == {"pkg/new.py": "A = 1\nB = 2\n"} and r.created == {"pkg/new.py"}
    r = apply_output({"b.py": None}, "b.py\n```python\nprint('hi')\n```\n")
    assert r.new_texts == {"b.py": "print('hi')\n"}
    r = apply_output({"c.py": None}, sr("c.py", "", "C = 3\n"))
    assert r.new_texts == {"c.py": "C = 3\n"}


def test_whole_file_replacement_of_existing() -> None:
    r = apply_output({"util.py": "X = 1\n"}, "util.py\n```\nX = 2\nY = 3\n```")
    assert r.new_texts == {"util.py": "X = 2\nY = 3\n"} and r.matches == ["whole"]


def test_prose_fences_are_not_files() -> None:
    text = "Here is an example:\n```python\nprint(1)\n```\n"
    edits, failures = parse_edits(text)
    assert [(e.path, e.kind) for e in edits] == [("", "block")] and failures == []
    # With no single file under repair, a bare block is no edit at all, and no error.
    r = apply_output({"a.py": "x = 1\n"}, text)
    assert r.new_texts == {} and r.failures == []


def test_parse_failures_are_reported() -> None:
    edits, failures = parse_edits("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n")
    assert not edits and "unterminated" in failures[0].message
    pathless = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    r = apply_output({"a.py": "x\n", "b.py": "x\n"}, pathless, targets=["a.py", "b.py"])
    assert "without a file path" in r.failures[0].message and not r.new_texts
    r = apply_output({"a.py": "x\n"}, pathless, targets=["a.py"])  # the only file under repair
    assert r.new_texts == {"a.py": "y\n"}
    _, failures = parse_edits("--- a/x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    assert "deleting files is not supported" in failures[0].message


def test_edit_to_missing_file_or_unloaded_path() -> None:
    r = apply_output({"a.py": None}, sr("a.py", "x\n", "y\n"))
    assert "does not exist" in r.report()
    r = apply_output({}, sr("a.py", "x\n", "y\n"))
    assert "not loaded" in r.report()


def test_noop_edit_changes_nothing() -> None:
    r = apply_output({"calc.py": CALC}, sr("calc.py", "    return a - b\n", "    return a - b\n"))
    assert not r.new_texts and not r.failures and not r.ok


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.text(max_size=200))
def test_apply_never_raises(text: str, output: str) -> None:
    r = apply_output({"a.py": text}, "a.py\n<<<<<<< SEARCH\n" + output)
    assert isinstance(r.failures, list)
    r = apply_output({"a.py": text}, output)
    assert r.ok or not r.new_texts or not r.failures


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=20),
        min_size=3,
        max_size=30,
        unique=True,
    ),
    st.data(),
)
def test_exact_replacement_of_a_unique_line(lines: list[str], data: st.DataObject) -> None:
    lines = [ln.strip() + f" #{i}" for i, ln in enumerate(lines)]
    text = "\n".join(lines) + "\n"
    k = data.draw(st.integers(0, len(lines) - 1))
    r = apply_output({"f.py": text}, sr("f.py", lines[k] + "\n", "CHANGED\n"))
    assert r.ok, r.report()
    assert r.new_texts["f.py"].splitlines() == [*lines[:k], "CHANGED", *lines[k + 1 :]]


def test_hunks_apply_in_any_subset_and_close_changes_are_one_hunk() -> None:
    from conductor_lsp.edits.hunks import apply_hunks, file_hunks, hunks_of

    before = "a\nb\nc\nd\ne\nf\ng\nh\n"
    after = "a\nB\nc\nd\ne\nf\nG\nh\nI\n"
    hunks = file_hunks("x.py", before, after)
    assert [h.label for h in hunks] == ["x.py:2", "x.py:7-8"]  # g..I: one hunk (a gap of 1)
    assert apply_hunks(before, hunks, set()) == before
    assert apply_hunks(before, hunks, {0, 1}) == after
    assert apply_hunks(before, hunks, {0}) == "a\nB\nc\nd\ne\nf\ng\nh\n"
    assert apply_hunks(before, hunks, {1}) == "a\nb\nc\nd\ne\nf\nG\nh\nI\n"
    assert "@@ -2,1 +2,1 @@\n-b\n+B\n" in hunks[0].diff()
    both = hunks_of({"x.py": before, "new.py": None}, {"x.py": after, "new.py": "z\n"})
    assert [(h.index, h.label) for h in both] == [(0, "new.py:1"), (1, "x.py:2"), (2, "x.py:7-8")]
    assert apply_hunks(None, both[:1], {0}) == "z\n"
    assert apply_hunks(None, both[:1], set()) == ""


def test_which_hunks_an_editor_kept_is_read_back_from_the_text() -> None:
    from conductor_lsp.edits.hunks import applied_hunks, apply_hunks, file_hunks

    before = "a\nb\nc\nd\ne\nf\ng\nh\n"
    hunks = file_hunks("x.py", before, "a\nB\nc\nd\ne\nf\nG\nh\nI\n")
    for kept in (set(), {0}, {1}, {0, 1}):
        assert applied_hunks(before, hunks, apply_hunks(before, hunks, kept)) == kept
    assert applied_hunks(before, hunks, before.replace("c", "user's own")) is None


@pytest.mark.parametrize(
    ("errors", "line"),
    [("calc.py: SEARCH text not found\nmore", "no edit applied: calc.py: SEARCH text not found"),
     ("\n  \ncalc.py: refused\n", "no edit applied: calc.py: refused"),
     ("", "no edit applied: the answer held no edit")],
)  # fmt: skip
def test_an_answer_with_no_edit_is_one_line_naming_the_first_reason(errors: str, line: str) -> None:
    """A verdict and the editor's report name the first reason given, never a blank one
    (the report once took the first line as it stood, blank or not)."""
    assert no_edit(errors) == line
