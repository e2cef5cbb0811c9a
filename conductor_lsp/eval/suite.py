"""Task suites: a folder of tasks, each a folder with its files and a ``task.toml``.

``task.toml`` holds ``instruction`` (what the user asks), ``test`` (the test
command; a leading ``python`` means the interpreter running conductor-lsp),
``kind`` (``bugfix`` or ``implement``) and, optionally, ``[solution] edit``: the
known fix as SEARCH/REPLACE blocks, used to check the task and by scripted
benchmark workers. ``task.toml`` is never copied into the workspace a model sees.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..checkpoints.git import init_repository
from ..errors import ConfigError

TASK_FILE = "task.toml"
KINDS = ("bugfix", "implement")


@dataclass(frozen=True)
class SuiteTask:
    name: str
    path: Path
    instruction: str
    test: str
    kind: str
    solution: str = ""

    def test_command(self) -> str:
        """The test command, with a leading ``python`` as this interpreter."""
        argv = shlex.split(self.test)
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        return shlex.join(argv)

    def files(self) -> list[str]:
        """The task's files (what a workspace gets), as relative POSIX paths."""
        return sorted(
            p.relative_to(self.path).as_posix()
            for p in self.path.rglob("*")
            if p.is_file() and p.name != TASK_FILE and "__pycache__" not in p.parts
        )


def load_task(path: Path) -> SuiteTask:
    spec_file = path / TASK_FILE
    try:
        spec = tomllib.loads(spec_file.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{spec_file}: cannot read: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{spec_file}: invalid TOML: {e}") from e
    for key in ("instruction", "test"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            raise ConfigError(f"{spec_file}: `{key}` (a non-empty string) is required")
    kind = spec.get("kind", "bugfix")
    if kind not in KINDS:
        raise ConfigError(f"{spec_file}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    solution = spec.get("solution", {})
    edit = solution.get("edit", "") if isinstance(solution, dict) else ""
    if not isinstance(edit, str):
        raise ConfigError(f"{spec_file}: [solution] edit must be a string")
    return SuiteTask(path.name, path, spec["instruction"].strip(), spec["test"], kind, edit)


def load_suite(path: Path) -> list[SuiteTask]:
    """Every task folder under ``path`` (or ``path`` itself if it is one task), by name."""
    path = path.resolve()
    if not path.is_dir():
        raise ConfigError(f"suite {path} is not a directory")
    if (path / TASK_FILE).is_file():
        return [load_task(path)]
    tasks = [load_task(p) for p in sorted(path.iterdir()) if (p / TASK_FILE).is_file()]
    if not tasks:
        raise ConfigError(f"suite {path} holds no task folders (folders with a {TASK_FILE})")
    return tasks


def prepare(task: SuiteTask, into: Path) -> Path:
    """A fresh workspace for ``task``: its files (not task.toml) in a new git repository
    with one commit, so checkpoints and undo work as in a real project."""
    repo = into / task.name
    shutil.copytree(
        task.path, repo, ignore=shutil.ignore_patterns(TASK_FILE, "__pycache__", ".pytest_cache")
    )
    init_repository(repo)
    return repo
