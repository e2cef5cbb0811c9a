"""A task: what the user asked for, with the context the editor or CLI gathered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .edits.paths import check_path
from .edits.workspace import read_text
from .errors import EditError, UnsafePath

#: Most characters of one file shown to a model (the fix loop skips bigger files).
MAX_FILE_CHARS = 60_000
#: Most characters of test output (and of the previous round) in the conductor's brief.
BRIEF_CHARS = 2_000


def _head(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "\n... [cut]"


def _failures_only(report: str) -> str:
    """A test report cut after its list of failures, when it has one.

    ``TestRun.summary`` writes the command, the state, one ``- test at file:line: message``
    line per failure and then the raw output: routing needs the list, the workers get
    the rest. A report with no such list (an unparsed runner, a crash) is kept whole."""
    lines = report.strip().splitlines()
    keep = 0
    for i, line in enumerate(lines):
        if i < 2 and not line.startswith("- "):
            continue
        if not line.startswith("- "):
            break
        keep = i + 1
    return "\n".join(lines[:keep]) if keep else report


@dataclass(frozen=True)
class FileContext:
    path: str
    text: str
    #: 1-based inclusive line range the user selected, if any.
    selection: tuple[int, int] | None = None
    #: False for files shown only as context (the tests a fix job must make pass).
    editable: bool = True
    #: ``text`` is part of the file, its gaps marked (a worker's window is too small for
    #: the whole: ``context.window``); such a file is changed by SEARCH/REPLACE only.
    partial: bool = False
    #: Which definitions a partly shown file shows, and why (said in its header).
    why: str = ""


@dataclass(frozen=True)
class Task:
    instruction: str
    files: tuple[FileContext, ...] = ()
    diagnostics: tuple[str, ...] = ()
    test_failures: str = ""
    #: The previous round's plan and outcome, so a corrective plan can learn from it.
    previous: str = ""
    #: What a routing policy says of each worker for this task (shown to the conductor).
    hints: str = ""
    #: An outline of the rest of the workspace (shown to analysis steps).
    repo_map: str = ""
    #: Every step sees the map (editor and ``run`` jobs), not only analysis (fix jobs).
    map_every_step: bool = False
    #: What was cut to fit the worker's window, one ``- what`` line each (``context.budget``).
    cut: str = ""

    def editable(self) -> list[str]:
        """The paths of the files this task may change."""
        return [f.path for f in self.files if f.editable]

    def brief(self, *, max_chars: int = BRIEF_CHARS) -> str:
        """The task as the conductor sees it: what to do and what failed, and the files by
        name and size only. It routes work, it does not write code; a short prompt keeps
        its calls cheap (it is a paid model too) and fast on small local models."""
        parts = [f"## Task\n{self.instruction.strip()}"]
        if self.files:
            lines = []
            for f in self.files:
                n = f.text.count("\n") + (not f.text.endswith("\n") and bool(f.text))
                state = "may change" if f.editable else "read only"
                lines.append(f"- `{f.path}` ({n} lines, {state})")
            parts.append("## Files\n" + "\n".join(lines))
        if self.diagnostics:
            parts.append("## Diagnostics\n" + "\n".join(f"- {d}" for d in self.diagnostics))
        if self.test_failures:
            parts.append(
                f"## Failing tests\n{_head(_failures_only(self.test_failures), max_chars)}"
            )
        if self.previous:
            parts.append(f"## Previous attempt\n{_head(self.previous, max_chars)}")
        if self.hints:
            parts.append(f"## What worked on similar tasks\n{self.hints}")
        return "\n\n".join(parts)

    def render(self, *, max_file_chars: int = MAX_FILE_CHARS) -> str:
        """Task and context as Markdown; identical for every step so prompt caches hit."""
        parts = [f"## Task\n{self.instruction.strip()}"]
        for f in self.files:
            text = f.text
            if len(text) > max_file_chars:
                text = text[:max_file_chars] + "\n... [truncated]\n"
            header = f"## File `{f.path}`"
            if f.selection:
                header += f" (selected lines {f.selection[0]}-{f.selection[1]})"
            if not f.editable:
                header += " (read only)"
            if f.partial:
                header += " (shown in part: the lines marked '# ... not shown' are hidden)"
                header += f"\nShown: {f.why}." if f.why else ""
            parts.append(f"{header}\n```\n{text.rstrip()}\n```")
        if self.diagnostics:
            parts.append("## Diagnostics\n" + "\n".join(f"- {d}" for d in self.diagnostics))
        if self.test_failures:
            parts.append(f"## Failing tests\n{self.test_failures.strip()}")
        if self.previous:
            parts.append(f"## Previous attempt\n{self.previous.strip()}")
        if self.cut:
            parts.append(f"## Not shown (your window is too small for all of it)\n{self.cut}")
        return "\n\n".join(parts)


def file_context(
    root: Path,
    path: Path | str,
    deny: Sequence[str],
    *,
    text: str | None = None,
    selection: tuple[int, int] | None = None,
) -> FileContext:
    """A workspace file as models are shown it, for every front end alike: a path outside
    the workspace or on the deny list is refused (``EditError``), never sent; ``text`` is
    the editor's buffer, else the file is read from disk."""
    root = root.resolve()
    full = Path(path) if Path(path).is_absolute() else root / path
    try:
        rel = full.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        raise UnsafePath(f"{path} is outside the workspace {root}") from None
    where = check_path(root, rel, deny)
    if text is None:
        disk = read_text(where)
        if disk is None:
            raise EditError(f"cannot read {path}: no such file")
        text = disk.text
    return FileContext(rel, text, selection)
