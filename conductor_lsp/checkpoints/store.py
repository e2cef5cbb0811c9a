"""Checkpoints of the whole working tree, taken before a job changes anything.

In git: a commit of tracked, modified and untracked non-ignored files, built
with a temporary index and stored under ``refs/conductor/checkpoints/``. HEAD,
the branch, the index and the stash are never touched. Outside git: a copy in
a cache directory. Either survives a killed process, so ``undo`` always works.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import CheckpointError
from ..storage.cache import cache_home
from ..storage.state import STATE_DIR
from .git import GIT_IDENTITY, PLAIN_DIFF

REF_PREFIX = "refs/conductor/checkpoints/"
EXCLUDE = (STATE_DIR,)  # our own traces and state
COPY_SKIP = {
    ".git",
    STATE_DIR,
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
}
KEEP = 50
#: Labels name what a checkpoint marks, so undo can tell a job's start from its steps.
JOB_START = "before fix"
JOB_END = "after fix"
#: A verified fix the job could not write (the user changed its files meanwhile, or cancel).
JOB_KEPT = "verified fix, not written"
BEFORE_UNDO = "before undo"


@dataclass(frozen=True)
class Checkpoint:
    kind: str  # "git" or "copy"
    ref: str  # the git ref, or the copy's directory
    label: str
    created: float
    commit: str = ""

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created))
        return f"{when}  {self.ref}  {self.label}"


def _repo(root: Path) -> object | None:
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
def _temp_index(repo: object) -> Iterator[dict[str, str]]:
    fd, path = tempfile.mkstemp(prefix="conductor-index-")
    os.close(fd)
    os.unlink(path)  # git wants to create it
    try:
        yield {**GIT_IDENTITY, "GIT_INDEX_FILE": path}
    finally:
        Path(path).unlink(missing_ok=True)
        Path(path + ".lock").unlink(missing_ok=True)


def _snapshot_tree(repo: object, env: dict[str, str]) -> str:
    g = repo.git  # type: ignore[attr-defined]
    if repo.head.is_valid():  # type: ignore[attr-defined]
        g.read_tree("HEAD", env=env)
    g.add("-A", env=env)
    g.rm("-r", "-q", "--cached", "--ignore-unmatch", "--", *EXCLUDE, env=env)
    return str(g.write_tree(env=env))


@contextmanager
def _git_errors(what: str) -> Iterator[None]:
    """gitpython's errors become CheckpointError, here and nowhere else."""
    import git

    try:
        yield
    except git.GitCommandError as e:
        detail = (e.stderr or str(e)).strip().splitlines()
        raise CheckpointError(f"{what}: {detail[0] if detail else e}") from e


def create(root: Path, label: str, *, cache_dir: Path | None = None) -> Checkpoint:
    """Snapshot the working tree; nothing else in the repository changes."""
    root = root.resolve()
    repo = _repo(root)
    now = time.time()
    if repo is None:
        return _copy_create(root, label, now, cache_dir)
    with _git_errors("could not take a git checkpoint"), _temp_index(repo) as env:
        tree = _snapshot_tree(repo, env)
        args = [tree, "-m", f"conductor-lsp checkpoint: {label}"]
        if repo.head.is_valid():  # type: ignore[attr-defined]
            args[1:1] = ["-p", "HEAD"]
        commit = str(repo.git.commit_tree(*args, env=env))  # type: ignore[attr-defined]
    return _stored(repo, commit, label, now)


def _stored(repo: object, commit: str, label: str, now: float) -> Checkpoint:
    """Name ``commit`` under the checkpoints' refs (oldest beyond ``KEEP`` dropped)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    ref = f"{REF_PREFIX}{stamp}-{int(now * 1e6) % 1_000_000:06d}-{commit[:8]}"
    with _git_errors("could not store the checkpoint"):
        repo.git.update_ref(ref, commit)  # type: ignore[attr-defined]
    _prune(repo)
    return Checkpoint("git", ref, label, now, commit)


def list_checkpoints(root: Path, *, cache_dir: Path | None = None) -> list[Checkpoint]:
    """Newest first."""
    root = root.resolve()
    repo = _repo(root)
    if repo is None:
        base = _copy_base(root, cache_dir)
        out = []
        for d in sorted(base.glob("*"), reverse=True) if base.is_dir() else []:
            meta = d / "checkpoint.json"
            if meta.is_file():
                m = json.loads(meta.read_text())
                out.append(Checkpoint("copy", str(d), m["label"], m["created"]))
        return out
    fmt = "%(refname)%09%(objectname)%09%(committerdate:unix)%09%(contents:subject)"
    raw = repo.git.for_each_ref(REF_PREFIX, f"--format={fmt}", "--sort=-refname")  # type: ignore[attr-defined]
    out = []
    for line in str(raw).splitlines():
        ref, commit, when, subject = line.split("\t", 3)
        label = subject.removeprefix("conductor-lsp checkpoint: ")
        out.append(Checkpoint("git", ref, label, float(when), commit))
    return out


def restore(root: Path, checkpoint: Checkpoint) -> Checkpoint:
    """Put the working tree back as it was; returns a checkpoint of the state it replaced."""
    root = root.resolve()
    before = create(root, f"{BEFORE_UNDO} to {checkpoint.ref}", cache_dir=_cache_of(checkpoint))
    if checkpoint.kind == "copy":
        _copy_restore(root, Path(checkpoint.ref), Path(before.ref))
        return before
    repo = _repo(root)
    if repo is None:
        raise CheckpointError(f"{root} is no longer a git repository")
    g = repo.git  # type: ignore[attr-defined]
    with _git_errors("could not restore the checkpoint"), _temp_index(repo) as env:
        added = str(
            g.diff_tree(
                "-r",
                "--name-only",
                "--no-renames",
                "--diff-filter=A",
                checkpoint.commit,
                before.commit,
            )
        ).splitlines()
        g.read_tree(checkpoint.commit, env=env)
        g.checkout_index("-a", "-f", env=env)
    for rel in added:  # files that appeared after the checkpoint
        (root / rel).unlink(missing_ok=True)
    return before


def same_state(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether the working tree holds exactly what ``checkpoint`` holds."""
    root = root.resolve()
    if checkpoint.kind == "copy":
        files = Path(checkpoint.ref) / "files"
        ours = {p.relative_to(root): p for p in _files(root) if not p.is_symlink()}
        saved = {p.relative_to(files): p for p in _files(files)}
        return ours.keys() == saved.keys() and all(
            ours[k].read_bytes() == saved[k].read_bytes() for k in ours
        )
    repo = _repo(root)
    if repo is None:
        return False
    with _git_errors("could not compare with the checkpoint"), _temp_index(repo) as env:
        tree = _snapshot_tree(repo, env)
        saved_tree = str(repo.git.rev_parse(f"{checkpoint.commit}^{{tree}}"))  # type: ignore[attr-defined]
    return tree == saved_tree


def diff(root: Path, checkpoint: Checkpoint) -> str:
    """What changed in the working tree since the checkpoint, as a unified diff."""
    root = root.resolve()
    if checkpoint.kind == "copy":
        return _copy_diff(root, Path(checkpoint.ref))
    repo = _repo(root)
    if repo is None:
        return ""
    with _git_errors("could not diff against the checkpoint"), _temp_index(repo) as env:
        tree = _snapshot_tree(repo, env)
        return str(repo.git.diff(*PLAIN_DIFF, checkpoint.commit, tree))  # type: ignore[attr-defined]


def read_file(checkpoint: Checkpoint, rel: str, root: Path) -> bytes | None:
    """The bytes ``rel`` held in ``checkpoint`` (None when it did not exist)."""
    if checkpoint.kind == "copy":
        path = Path(checkpoint.ref) / "files" / rel
        return path.read_bytes() if path.is_file() else None
    repo = _repo(root.resolve())
    if repo is None:
        raise CheckpointError(f"{root} is no longer a git repository")
    try:
        blob = repo.commit(checkpoint.commit).tree / rel  # type: ignore[attr-defined]
    except KeyError:
        return None
    return bytes(blob.data_stream.read())


def create_with(root: Path, base: Checkpoint, files: dict[str, bytes], label: str) -> Checkpoint:
    """A checkpoint of ``base`` with ``files`` written over it, the working tree untouched:
    a verified fix kept for ``undo --ref`` when it could not be applied."""
    root = root.resolve()
    now = time.time()
    if base.kind == "copy":
        point = _copy_create(root, label, now, _cache_of(base), source=Path(base.ref) / "files")
        for rel, data in files.items():
            dest = Path(point.ref) / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return point
    repo = _repo(root)
    if repo is None:
        raise CheckpointError(f"{root} is no longer a git repository")
    g = repo.git  # type: ignore[attr-defined]
    with _git_errors("could not store the fix as a checkpoint"), _temp_index(repo) as env:
        g.read_tree(base.commit, env=env)
        for rel, data in files.items():
            blob = repo.odb.store(_istream(data)).hexsha.decode()  # type: ignore[attr-defined]
            known = str(g.ls_files("-s", "--", rel, env=env)).split(" ", 1)[0]
            mode = known if known in ("100644", "100755") else "100644"
            g.update_index("--add", "--cacheinfo", f"{mode},{blob},{rel}", env=env)
        tree = str(g.write_tree(env=env))
        message = f"conductor-lsp checkpoint: {label}"
        commit = str(g.commit_tree(tree, "-p", base.commit, "-m", message, env=env))
    return _stored(repo, commit, label, now)


def _istream(data: bytes) -> object:
    from io import BytesIO

    from gitdb import IStream

    return IStream("blob", len(data), BytesIO(data))


def _prune(repo: object) -> None:
    refs = str(repo.git.for_each_ref(REF_PREFIX, "--format=%(refname)", "--sort=-refname"))  # type: ignore[attr-defined]
    for ref in refs.splitlines()[KEEP:]:
        repo.git.update_ref("-d", ref)  # type: ignore[attr-defined]


# --- outside git: copies in a cache directory ------------------------------------------


def workspace_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:16]


def _copy_base(root: Path, cache_dir: Path | None) -> Path:
    return (cache_dir or cache_home()) / "checkpoints" / workspace_key(root)


def _cache_of(checkpoint: Checkpoint) -> Path | None:
    if checkpoint.kind != "copy":
        return None
    return Path(checkpoint.ref).parents[2]


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in COPY_SKIP]
        for name in filenames:
            yield Path(dirpath) / name


def _copy_create(
    root: Path, label: str, now: float, cache_dir: Path | None, source: Path | None = None
) -> Checkpoint:
    base = _copy_base(root, cache_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    target = base / f"{stamp}-{int(now * 1e6) % 1_000_000:06d}"
    files = target / "files"
    files.mkdir(parents=True)
    source = source or root
    for path in _files(source):
        if path.is_symlink():
            continue
        dest = files / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    (target / "checkpoint.json").write_text(
        json.dumps({"label": label, "created": now, "root": str(root)})
    )
    for old in sorted(base.glob("*"), reverse=True)[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
    return Checkpoint("copy", str(target), label, now)


def _copy_restore(root: Path, saved: Path, before: Path) -> None:
    files = saved / "files"
    for path in list(_files(root)):
        rel = path.relative_to(root)
        if not (files / rel).exists() and (before / "files" / rel).exists():
            path.unlink()
    for src in _files(files):
        dest = root / src.relative_to(files)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def _copy_diff(root: Path, saved: Path) -> str:
    import difflib

    files = saved / "files"
    rels = {p.relative_to(files) for p in _files(files)} | {
        p.relative_to(root) for p in _files(root)
    }
    out: list[str] = []
    for rel in sorted(rels):
        a, b = files / rel, root / rel
        try:
            old = a.read_text().splitlines(keepends=True) if a.exists() else []
            new = b.read_text().splitlines(keepends=True) if b.exists() else []
        except UnicodeDecodeError:
            continue
        out += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
    return "".join(out)
