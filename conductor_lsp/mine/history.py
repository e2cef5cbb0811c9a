"""Which commits could be tasks: first-parent history, newest first, each commit that
changes both test files and other Python files (read with git, nothing checked out);
merges too when asked, each as the change it brought to its first parent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..checkpoints.git import run_git
from ..context.files import is_test_path

GIT_SECONDS = 60


def git_bytes(root: Path, *args: str) -> bytes:
    """A read-only git command in ``root``; its stdout as it is (trees, blobs)."""
    return run_git(root, *args, timeout=GIT_SECONDS).stdout


def git(root: Path, *args: str) -> str:
    """A read-only git command in ``root``; its stdout as text."""
    return git_bytes(root, *args).decode("utf-8", "replace")


@dataclass(frozen=True)
class Candidate:
    """A commit that may become a task, or why it cannot ('' when it may)."""

    commit: str
    parent: str
    subject: str
    date: str
    tests: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    skip: str = ""

    @property
    def short(self) -> str:
        return self.commit[:10]


def _changed(root: Path, parent: str, commit: str) -> list[tuple[str, str]]:
    """(status letter, path) of each file the commit changed against ``parent``."""
    out = git(root, "diff", "--name-status", "--no-renames", parent, commit)
    rows = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        if path:
            rows.append((status[:1], path))
    return rows


def _subject(subject: str, body: str, merge: bool) -> str:
    """A merge's own subject names a branch ("Merge pull request #12 from ..."); the
    pull request's title, the body's first line, says what it did."""
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return first if merge and first and subject.startswith("Merge") else subject


def candidates(
    root: Path, since: str = "", head: str = "HEAD", *, merges: bool = False
) -> Iterator[Candidate]:
    """Every first-parent commit from ``head`` back to ``since`` (exclusive), newest first,
    with why it is skipped when it cannot be a task. With ``merges``, a merge is read as
    the change it brought to its first parent (a pull request merged whole)."""
    span = f"{since}..{head}" if since else head
    log = git(root, "log", "--first-parent", "--format=%H%x00%P%x00%cI%x00%s%x00%b%x1e", span)
    for record in log.split("\x1e"):
        if not record.strip():
            continue
        commit, parents, date, subject, body = record.strip("\n").split("\x00", 4)
        parent = parents.split()
        subject = _subject(subject, body, len(parent) > 1)
        base = Candidate(commit, parent[0] if parent else "", subject, date)
        if not parent:
            yield _skip(base, "the first commit (no parent to revert to)")
            continue
        if len(parent) > 1 and not merges:
            yield _skip(base, "a merge")
            continue
        rows = _changed(root, parent[0], commit)
        tests = tuple(p for s, p in rows if p.endswith(".py") and is_test_path(p))
        code = tuple(p for s, p in rows if p.endswith(".py") and not is_test_path(p))
        if not tests:
            yield _skip(base, "no test changed")
        elif not code:
            yield _skip(base, "no code changed beside the tests")
        elif not any(s in "AM" for s, p in rows if p in tests):
            yield _skip(base, "tests only deleted")
        else:
            yield Candidate(commit, parent[0], subject, date, tests, code)


def _skip(c: Candidate, why: str) -> Candidate:
    return Candidate(c.commit, c.parent, c.subject, c.date, c.tests, c.code, why)
