"""Model output is untrusted: path safety and all-or-nothing writes on a real disk."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import sr

from conductor_lsp import UnsafePath
from conductor_lsp.edits import DEFAULT_DENY, check_path
from conductor_lsp.edits.workspace import apply_output_to_disk


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".env").write_text("TOKEN=abc\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text("SAFE = True\n")
    (root / "link_out").symlink_to(outside)
    (root / "inner").mkdir()
    (root / "link_in").symlink_to(root / "inner")
    return root


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/etc/passwd", "absolute"),
        ("C:/Windows/x.py", "absolute"),
        ("~/x.py", "absolute"),
        ("../outside/victim.py", "'..'"),
        ("inner/../../outside/victim.py", "'..'"),
        (".git/hooks/pre-commit", ".git/"),
        ("sub/.git/config", ".git/"),
        ("link_out/victim.py", "symlink 'link_out' leads outside"),
        (".env", "deny list"),
        ("config/.env.local", "deny list"),
        ("certs/server.pem", "deny list"),
        (".ssh/id_rsa", "deny list"),
        ("", "empty"),
        ("a\0b.py", "NUL"),
    ],
)
def test_hostile_paths_are_refused(ws: Path, path: str, why: str) -> None:
    with pytest.raises(UnsafePath, match=why.replace(".", r"\.").replace("(", r"\(")):
        check_path(ws, path, DEFAULT_DENY)


def test_safe_paths_resolve_inside(ws: Path) -> None:
    assert check_path(ws, "./calc.py") == ws.resolve() / "calc.py"
    assert check_path(ws, "new/dir/mod.py") == ws.resolve() / "new/dir/mod.py"
    assert check_path(ws, "link_in/x.py") == ws.resolve() / "inner/x.py"  # a link inside is fine


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root.parent)): p.read_bytes()
        for p in root.parent.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.parametrize(
    "hostile",
    [
        sr("../outside/victim.py", "SAFE = True\n", "SAFE = False\n"),
        sr("link_out/victim.py", "SAFE = True\n", "SAFE = False\n"),
        sr(".git/hooks/pre-commit", "", "#!/bin/sh\nrm -rf ~\n"),
        "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+evil\n",
        sr("/tmp/evil.py", "", "x\n"),
        sr(".env", "TOKEN=abc\n", "TOKEN=stolen\n"),
    ],
)
def test_hostile_edit_beside_a_good_one_writes_nothing(ws: Path, hostile: str) -> None:
    before = snapshot(ws)
    good = sr("calc.py", "    return a - b\n", "    return a + b\n")
    result = apply_output_to_disk(ws, good + hostile)
    assert result.written == [] and result.result.failures
    assert "refused path" in result.result.report()
    assert snapshot(ws) == before
    assert not Path("/tmp/evil.py").exists()


def test_good_edit_keeps_mode_encoding_and_line_endings(ws: Path) -> None:
    script = ws / "run.py"
    script.write_bytes(b"\xef\xbb\xbf#!/usr/bin/env python\r\nprint('h\xc3\xa9')\r\n")
    script.chmod(0o755)
    latin = ws / "old.py"
    latin.write_bytes(b"# caf\xe9\nX = 1\n")
    out = sr("run.py", "print('hé')\n", "print('héllo')\n") + sr("old.py", "X = 1\n", "X = 2\n")
    result = apply_output_to_disk(ws, out)
    assert result.written == ["old.py", "run.py"], result.result.report()
    assert script.read_bytes() == b"\xef\xbb\xbf#!/usr/bin/env python\r\nprint('h\xc3\xa9llo')\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert latin.read_bytes() == b"# caf\xe9\nX = 2\n"
    assert not list(ws.glob("*.conductor-tmp"))


def test_binary_files_are_refused(ws: Path) -> None:
    (ws / "blob.py").write_bytes(b"x = 1\n\0\0\0")
    result = apply_output_to_disk(ws, sr("blob.py", "x = 1\n", "x = 2\n"))
    assert "binary file refused" in result.result.report()
    assert (ws / "blob.py").read_bytes() == b"x = 1\n\0\0\0"


def test_unencodable_text_writes_nothing(ws: Path) -> None:
    (ws / "old.py").write_bytes(b"# caf\xe9\nX = 1\n")
    out = sr("calc.py", "    return a - b\n", "    return a + b\n") + sr(
        "old.py", "X = 1\n", "X = '→'\n"
    )
    result = apply_output_to_disk(ws, out)
    assert result.written == [] and "cannot be written as latin-1" in result.result.report()
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_new_file_in_new_directory(ws: Path) -> None:
    result = apply_output_to_disk(ws, "pkg/sub/mod.py\n```python\nA = 1\n```\n")
    assert result.written == ["pkg/sub/mod.py"]
    assert (ws / "pkg/sub/mod.py").read_text() == "A = 1\n"


def test_failed_rename_rolls_back(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "b.py").write_text("B = 1\n")
    real_replace = os.replace
    calls = 0

    def flaky(src: str, dst: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError("disk full")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", flaky)
    out = sr("calc.py", "    return a - b\n", "    return a + b\n") + sr(
        "b.py", "B = 1\n", "B = 2\n"
    )
    result = apply_output_to_disk(ws, out)
    assert result.written == [] and "disk full" in result.result.report()
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert (ws / "b.py").read_text() == "B = 1\n"
    assert not list(ws.glob(".*.conductor-tmp"))
