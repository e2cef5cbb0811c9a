"""All or nothing on a real disk: whatever goes wrong after the first write (a read-back
that differs, an exception, a file changed under us), every file the answer touched holds
its old bytes again, and a refused answer never changes a byte of the workspace."""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from helpers import sr
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conductor_lsp.edits import workspace
from conductor_lsp.edits.workspace import apply_output_to_disk

#: Found by fuzzing: a REPLACE that runs on into a diff with NUL bytes. The old code wrote
#: a.py, could not read it back (binary) and reported failure with a.py changed on disk.
FUZZED = (
    "I fixed it.\n**dup.py**\n<<<<<<<<<< SEARCH\nx = 1\ny = 2\n=====\né中😀\n>>>>> REPLACE\n\n"
    "a.py:\n<<<<< SEARCH\n\ndef f24(x):\n=====\n>>>>>>>>>> REPLACE\n\n--- a/a.py\x00\n"
    "+++ b/a.py\x00\n@@ -44,2 +1,1 @@\n-nothing here\n+changed = True\n\n"
    "```python rep.py\nprint('whole')\n```\n"
)
FUNCS = "".join(f"def f{i}(x):\n    return x\n\n" for i in range(30))


def hostile(root: Path) -> Path:
    """A workspace with the shapes that trip writers: CRLF, Latin-1, a BOM, a duplicate
    block, a read-only file, a symlinked folder and a file outside."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.py").write_text(FUNCS)
    (root / "dup.py").write_text("x = 1\ny = 2\n\nx = 1\ny = 2\n")
    (root / "crlf.py").write_bytes(b"def g():\r\n    return 1\r\n")
    (root / "latin.py").write_bytes(b"# caf\xe9\nname = 'x'\n")
    (root / "bom.py").write_bytes(b"\xef\xbb\xbfvalue = 1\n")
    (root / "ro.py").write_text("frozen = 1\n")
    (root / "ro.py").chmod(0o444)
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "m.py").write_text("m = 1\n")
    if not (root / "alias").exists():
        (root / "alias").symlink_to(root / "pkg", target_is_directory=True)
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mode, and nothing else there (no temp file left behind)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (p.read_bytes(), p.stat().st_mode)
    return out


def test_the_fuzzed_answer_changes_nothing(tmp_path: Path) -> None:
    root = hostile(tmp_path / "ws")
    before = snapshot(root)
    disk = apply_output_to_disk(root, FUZZED)
    assert disk.written == []
    assert "NUL" in disk.result.report()
    assert snapshot(root) == before


def test_a_read_back_that_differs_puts_every_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two files written, the second does not read back: the first is restored too."""
    root = hostile(tmp_path / "ws")
    before = snapshot(root)
    monkeypatch.setattr(workspace, "_holds", lambda path, text: path.name != "latin.py")
    out = sr("a.py", "def f3(x):\n", "def f3(y):\n") + sr("latin.py", "name = 'x'\n", "name = 1\n")
    disk = apply_output_to_disk(root, out)
    assert disk.written == []
    assert "latin.py: the file does not hold the edit after writing" in disk.result.report()
    assert snapshot(root) == before


def test_an_exception_mid_write_puts_every_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second rename fails (a full disk, a signal): the first file, a new file and the
    folder made for it are all undone."""
    root = hostile(tmp_path / "ws")
    before = snapshot(root)
    real = os.replace
    calls: list[str] = []

    def failing(src: str, dst: str | Path) -> None:
        calls.append(str(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(workspace.os, "replace", failing)
    out = (
        sr("new/dir/made.py", "", "made = 1\n")
        + sr("crlf.py", "    return 1\n", "    return 2\n")
        + sr("bom.py", "value = 1\n", "value = 2\n")
    )
    disk = apply_output_to_disk(root, out)
    assert disk.written == []
    assert "nothing written" in disk.result.report() and "No space left" in disk.result.report()
    assert snapshot(root) == before
    assert not (root / "new").exists()


def test_a_file_changed_under_us_refuses_the_write(tmp_path: Path) -> None:
    """The editor (or the user) saves a.py after the answer was matched against it: the
    write is refused whole and the user's save stays."""
    root = hostile(tmp_path / "ws")

    def user_saves(path: str, old: str | None, new: str) -> str:
        if path == "a.py":
            (root / "a.py").write_text(FUNCS + "saved = True\n")
        return ""

    out = sr("a.py", "def f3(x):\n", "def f3(y):\n") + sr("pkg/m.py", "m = 1\n", "m = 2\n")
    before = snapshot(root)
    disk = apply_output_to_disk(root, out, guard=user_saves)
    assert disk.written == []
    assert "a.py changed on disk while the edit was made" in disk.result.report()
    after = snapshot(root)
    assert after["a.py"][0] == (FUNCS + "saved = True\n").encode()
    assert {k: v for k, v in after.items() if k != "a.py"} == {
        k: v for k, v in before.items() if k != "a.py"
    }


# --- the fuzz ------------------------------------------------------------------------------

PATHS = st.sampled_from(
    ["a.py", "./a.py", "A.py", "dup.py", "crlf.py", "latin.py", "bom.py", "ro.py", "pkg/m.py",
     "alias/m.py", "new.py", "../out.py", ".git/config", "a.py\x00", "latin.py/", ""]
)  # fmt: skip
TEXT = st.sampled_from(
    ["x = 1\n", "y = 2\n", "def f3(x):\n", "    return x\n", "    return 1\n", "value = 1\n",
     "name = 'x'\n", "m = 1\n", "frozen = 1\n", "\x00", "é中😀\n", "\r\n", "\udcff", "\ufeff",
     "\n", "=======\n", ">>>>>>> REPLACE\n", "```\n", "caf\xe9\n"]
).map(str)  # fmt: skip
LINES = st.lists(TEXT, max_size=4).map("".join)


def _diff(path: str, old: str, new: str) -> str:
    minus = "".join(f"-{line}\n" for line in old.splitlines())
    plus = "".join(f"+{line}\n" for line in new.splitlines())
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n{minus}{plus}"


#: Blocks that match the hostile workspace, so that some answers are written.
MATCHING = st.sampled_from(
    [("a.py", "def f3(x):\n"), ("./a.py", "    return x\n\ndef f7(x):\n"),
     ("crlf.py", "    return 1\n"), ("latin.py", "name = 'x'\n"),
     ("bom.py", "value = 1\n"), ("ro.py", "frozen = 1\n"),
     ("pkg/m.py", "m = 1\n"), ("alias/m.py", "m = 1\n"), ("new.py", "")]
)  # fmt: skip
BLOCK = st.one_of(
    st.builds(lambda ps, r: sr(ps[0], ps[1], r), MATCHING, LINES),
    st.builds(lambda ps, r: sr(ps[0], ps[1], r), MATCHING, LINES),
    st.builds(lambda p, s, r: sr(p, s, r), PATHS, LINES, LINES),
    st.builds(_diff, PATHS, LINES, LINES),
    st.builds(lambda p, body: f"```python {p}\n{body}```\n", PATHS, LINES),
    st.builds(lambda body: f"```python\n{body}```\n", LINES),
    st.builds(lambda p, body: f"**{p}**\n```\n{body}```\n", PATHS, LINES),
)
ANSWER = (
    st.lists(BLOCK, min_size=1, max_size=4)
    .map("\n".join)
    .map(lambda text: text.replace("\n", "\r\n") if "crlf" in text else text)
)


@settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ANSWER, st.sampled_from([(), ("a.py",), ("latin.py",)]))
def test_any_answer_writes_what_it_reports_or_nothing(
    tmp_path: Path, answer: str, targets: tuple[str, ...]
) -> None:
    root = hostile(Path(tempfile.mkdtemp(dir=tmp_path)))
    outside = root.parent / "out.py"
    before = snapshot(root)
    disk = apply_output_to_disk(root, answer, targets=targets)
    after = snapshot(root)
    assert not outside.exists()
    event("written" if disk.written else "refused" if disk.result.failures else "no change")
    if not disk.written:  # refused, or nothing to change: not a byte differs
        assert after == before
        return
    assert not disk.result.failures
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    resolved = {str((root / p).resolve().relative_to(root.resolve())) for p in disk.written}
    assert changed <= resolved | set(disk.written)
    for rel, text in disk.result.new_texts.items():
        assert workspace.read_text(root / rel).text == text  # type: ignore[union-attr]
