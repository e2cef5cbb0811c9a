"""The MCP door's paths, through its tools as plain methods: nothing outside the
workspace, nothing in ``.git``, and a bad path is a clear error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from conductor_lsp.errors import ConductorError, UnsafePath

pytest.importorskip("mcp")
from conductor_lsp.mcp_server.tools import Door


@pytest.fixture
def door(tmp_path: Path) -> Door:
    git.Repo.init(tmp_path / "ws")
    (tmp_path / "ws" / "pkg").mkdir()
    return Door(tmp_path / "ws")


@pytest.mark.parametrize(
    ("path", "error", "words"),
    [
        (".git", UnsafePath, "inside a .git folder"),
        (".git/refs", UnsafePath, "inside a .git folder"),
        ("pkg/../.git", UnsafePath, "inside a .git folder"),
        ("..", UnsafePath, "outside the workspace"),
        ("/", UnsafePath, "outside the workspace"),
        ("pkg\x00evil", ConductorError, "NUL byte"),
        ("a" * 5_000, ConductorError, "characters long"),
        ("a" * 300, ConductorError, "cannot be used"),  # one name past the file system's limit
        ("missing", ConductorError, "is not a folder"),
    ],
    ids=["git", "git-refs", "git-by-dotdot", "up", "root", "nul", "long", "long-name", "missing"],
)
async def test_a_bad_path_is_refused_with_a_reason(
    door: Door, path: str, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        await door.fix(path=path, test="true")
    with pytest.raises(error, match=words):
        await door.undo(path=path)


async def test_an_empty_task_is_refused_as_the_command_line_refuses_it(door: Door) -> None:
    with pytest.raises(ConductorError, match="the task is empty"):
        await door.plan("  ")


def test_a_folder_inside_is_fine(door: Door) -> None:
    assert door.inside("pkg") == door.root / "pkg" and door.inside("") == door.root
