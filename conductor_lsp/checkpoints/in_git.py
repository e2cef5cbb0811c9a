"""Checkpoints in the workspace's git repository: a commit of tracked, modified and
untracked non-ignored files, built with a temporary index and stored under
``refs/conductor/checkpoints/``; HEAD, the branch, the index and the stash are never
touched. Through GitPython, with the errors of ``_git_errors`` and nowhere else."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CheckpointError
from .git import GIT_IDENTITY, PLAIN_DIFF
from .model import EXCLUDE, KEEP, REF_PREFIX, Checkpoint


def repository(root: Path) -> Any | None:
    """The git repository whose working tree is exactly ``root`` (None: not one)."""
    try:
        import git
    except ImportError:  # pragma: no cover - gitpython is a dependency
        return None
    try:
        repo = git.Repo(root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    return repo if Path(repo.working_tree_dir or "").resolve() == root.resolve() else None


@contextmanager
def _temp_index() -> Iterator[dict[str, str]]:
    fd, path = tempfile.mkstemp(prefix="conductor-index-")
    os.close(fd)
    os.unlink(path)  # git wants to create it
    try:
        yield {**GIT_IDENTITY, "GIT_INDEX_FILE": path}
    finally:
        Path(path).unlink(missing_ok=True)
        Path(path + ".lock").unlink(missing_ok=True)


@contextmanager
def _git_errors(what: str) -> Iterator[None]:
    """gitpython's errors become CheckpointError, here and nowhere else."""
    import git

    try:
        yield
    except git.GitCommandError as e:
        detail = (e.stderr or str(e)).strip().splitlines()
        raise CheckpointError(f"{what}: {detail[0] if detail else e}") from e


@dataclass
class GitStore:
    root: Path
    #: None when ``root`` stopped being a repository since its checkpoints were taken.
    repo: Any | None
    kind: str = "git"

    def _repo(self) -> Any:
        if self.repo is None:
            raise CheckpointError(f"{self.root} is no longer a git repository")
        return self.repo

    def _snapshot_tree(self, env: dict[str, str]) -> str:
        repo = self._repo()
        if repo.head.is_valid():
            repo.git.read_tree("HEAD", env=env)
        repo.git.add("-A", env=env)
        repo.git.rm("-r", "-q", "--cached", "--ignore-unmatch", "--", *EXCLUDE, env=env)
        return str(repo.git.write_tree(env=env))

    def create(self, label: str, now: float) -> Checkpoint:
        repo = self._repo()
        with _git_errors("could not take a git checkpoint"), _temp_index() as env:
            tree = self._snapshot_tree(env)
            args = [tree, "-m", f"conductor-lsp checkpoint: {label}"]
            if repo.head.is_valid():
                args[1:1] = ["-p", "HEAD"]
            commit = str(repo.git.commit_tree(*args, env=env))
        return self._stored(commit, label, now)

    def _stored(self, commit: str, label: str, now: float) -> Checkpoint:
        """Name ``commit`` under the checkpoints' refs (oldest beyond ``KEEP`` dropped)."""
        repo = self._repo()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        ref = f"{REF_PREFIX}{stamp}-{int(now * 1e6) % 1_000_000:06d}-{commit[:8]}"
        with _git_errors("could not store the checkpoint"):
            repo.git.update_ref(ref, commit)
            refs = str(repo.git.for_each_ref(REF_PREFIX, "--format=%(refname)", "--sort=-refname"))
            for old in refs.splitlines()[KEEP:]:
                repo.git.update_ref("-d", old)
        return Checkpoint("git", ref, label, now, commit)

    def list(self) -> list[Checkpoint]:
        fmt = "%(refname)%09%(objectname)%09%(committerdate:unix)%09%(contents:subject)"
        raw = self._repo().git.for_each_ref(REF_PREFIX, f"--format={fmt}", "--sort=-refname")
        out = []
        for line in str(raw).splitlines():
            ref, commit, when, subject = line.split("\t", 3)
            label = subject.removeprefix("conductor-lsp checkpoint: ")
            out.append(Checkpoint("git", ref, label, float(when), commit))
        return out

    def restore(self, checkpoint: Checkpoint, before: Checkpoint) -> None:
        g = self._repo().git
        with _git_errors("could not restore the checkpoint"), _temp_index() as env:
            added = str(
                g.diff_tree(
                    "-r", "--name-only", "--no-renames", "--diff-filter=A",
                    checkpoint.commit, before.commit,
                )
            ).splitlines()  # fmt: skip
            g.read_tree(checkpoint.commit, env=env)
            g.checkout_index("-a", "-f", env=env)
        for rel in added:  # files that appeared after the checkpoint
            (self.root / rel).unlink(missing_ok=True)

    def same_state(self, checkpoint: Checkpoint) -> bool:
        if self.repo is None:
            return False
        with _git_errors("could not compare with the checkpoint"), _temp_index() as env:
            tree = self._snapshot_tree(env)
            saved = str(self.repo.git.rev_parse(f"{checkpoint.commit}^{{tree}}"))
        return tree == saved

    def diff(self, checkpoint: Checkpoint) -> str:
        if self.repo is None:
            return ""
        with _git_errors("could not diff against the checkpoint"), _temp_index() as env:
            tree = self._snapshot_tree(env)
            return str(self.repo.git.diff(*PLAIN_DIFF, checkpoint.commit, tree))

    def read_file(self, checkpoint: Checkpoint, rel: str) -> bytes | None:
        try:
            blob = self._repo().commit(checkpoint.commit).tree / rel
        except KeyError:
            return None
        return bytes(blob.data_stream.read())

    def create_with(
        self, base: Checkpoint, files: dict[str, bytes], label: str, now: float
    ) -> Checkpoint:
        repo = self._repo()
        g = repo.git
        with _git_errors("could not store the fix as a checkpoint"), _temp_index() as env:
            g.read_tree(base.commit, env=env)
            for rel, data in files.items():
                blob = repo.odb.store(_istream(data)).hexsha.decode()
                known = str(g.ls_files("-s", "--", rel, env=env)).split(" ", 1)[0]
                mode = known if known in ("100644", "100755") else "100644"
                g.update_index("--add", "--cacheinfo", f"{mode},{blob},{rel}", env=env)
            tree = str(g.write_tree(env=env))
            message = f"conductor-lsp checkpoint: {label}"
            commit = str(g.commit_tree(tree, "-p", base.commit, "-m", message, env=env))
        return self._stored(commit, label, now)


def _istream(data: bytes) -> object:
    from io import BytesIO

    from gitdb import IStream

    return IStream("blob", len(data), BytesIO(data))
