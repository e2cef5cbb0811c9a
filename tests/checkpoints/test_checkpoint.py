"""Checkpoints in real git repositories (and outside git): the user's work survives."""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from helpers import hostile_git_config

from conductor_lsp.checkpoints import store as cp


def make_repo(root: Path, *, commit: bool = True) -> git.Repo:
    repo = git.Repo.init(root)
    with repo.config_writer() as c:
        c.set_value("user", "name", "Test")
        c.set_value("user", "email", "test@example.com")
    (root / ".gitignore").write_text("ignored.log\n")
    (root / "a.py").write_text("A = 1\n")
    if commit:
        repo.index.add([".gitignore", "a.py"])
        repo.index.commit("init")
    return repo


def state(repo: git.Repo) -> tuple[str, str, str, list[str]]:
    head = repo.head.commit.hexsha if repo.head.is_valid() else ""
    return (
        head,
        repo.git.diff("--cached"),
        repo.git.stash("list"),
        repo.git.branch("--list").split(),
    )


def test_snapshot_touches_nothing_and_undo_restores_everything(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "a.py").write_text("A = 2  # staged\n")
    repo.index.add(["a.py"])
    (tmp_path / "a.py").write_text("A = 3  # unstaged on top\n")
    (tmp_path / "notes.txt").write_text("untracked user work\n")
    (tmp_path / "ignored.log").write_text("log\n")
    before = state(repo)
    point = cp.create(tmp_path, "before job")
    assert state(repo) == before  # HEAD, index, stash, branches untouched
    assert point.ref.startswith("refs/conductor/checkpoints/")

    # The job edits, creates and deletes files.
    (tmp_path / "a.py").write_text("A = 99\n")
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "created_by_job.py").write_text("x\n")
    assert "A = 99" in cp.diff(tmp_path, point)

    saved = cp.restore(tmp_path, point)
    assert (tmp_path / "a.py").read_text() == "A = 3  # unstaged on top\n"
    assert (tmp_path / "notes.txt").read_text() == "untracked user work\n"
    assert not (tmp_path / "created_by_job.py").exists()
    assert (tmp_path / "ignored.log").read_text() == "log\n"
    assert state(repo) == before  # the staged change is still staged
    # Undo is undoable: the replaced state was saved first.
    cp.restore(tmp_path, saved)
    assert (tmp_path / "a.py").read_text() == "A = 99\n"
    assert (tmp_path / "created_by_job.py").exists()


def test_repo_without_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, commit=False)
    point = cp.create(tmp_path, "first")
    assert not repo.head.is_valid()  # still no commits on the branch
    (tmp_path / "a.py").write_text("changed\n")
    cp.restore(tmp_path, point)
    assert (tmp_path / "a.py").read_text() == "A = 1\n"


def test_list_newest_first_and_trace_dir_excluded(tmp_path: Path) -> None:
    make_repo(tmp_path)
    (tmp_path / ".conductor").mkdir()
    first = cp.create(tmp_path, "one")
    (tmp_path / ".conductor" / "trace.jsonl").write_text("{}\n")
    second = cp.create(tmp_path, "two")
    refs = [p.ref for p in cp.list_checkpoints(tmp_path)]
    assert refs[:2] == [second.ref, first.ref]
    cp.restore(tmp_path, first)
    assert (tmp_path / ".conductor" / "trace.jsonl").exists()  # our own traces are left alone


def test_outside_git_uses_a_copy(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n")
    cache = tmp_path / "cache"
    point = cp.create(root, "plain", cache_dir=cache)
    assert point.kind == "copy" and Path(point.ref).is_relative_to(cache)
    (root / "a.py").write_text("A = 2\n")
    (root / "new.py").write_text("N\n")
    assert "+A = 2" in cp.diff(root, point)
    cp.restore(root, point)
    assert (root / "a.py").read_text() == "A = 1\n" and not (root / "new.py").exists()
    assert cp.list_checkpoints(root, cache_dir=cache)[-1].label == "plain"


def test_a_checkpoints_diff_is_plain_whatever_the_users_git_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An external diff program, colour always and no prefixes in the user's own git
    configuration: the diff against a checkpoint is still git's plain unified diff."""
    hostile = hostile_git_config(tmp_path)
    root = tmp_path / "ws"
    root.mkdir()
    make_repo(root)
    point = cp.create(root, "before")
    (root / "a.py").write_text("A = 99\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(hostile))
    diff = cp.diff(root, point)
    assert "NOT A DIFF" not in diff and "\x1b[" not in diff
    assert "--- a/a.py" in diff and "+++ b/a.py" in diff and "+A = 99" in diff
