"""The door's tools as plain async methods over one workspace root, so they are the same
whether the SDK or a test calls them; ``app`` registers them with the SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..configure import job_layer, load_config
from ..errors import ConductorError, UnsafePath
from ..jobs import (
    Event,
    FixReport,
    FixRequest,
    Hooks,
    Session,
    TaskRequest,
    describe_event,
    fix_repository,
    plan_task,
    undo,
)
from ..storage.records import as_data

#: The longest path the door reads (a file system's own limit is 4096).
MAX_PATH = 4096
#: Progress as the door reports it: (how many events so far, the event's line).
Report = Callable[[int, str], Coroutine[Any, Any, None]]


async def _silent(done: int, line: str) -> None:
    return None


@dataclass
class Door:
    """One workspace's tools; ``last`` keeps each repository's last fix for ``candidates``."""

    root: Path
    last: dict[Path, FixReport] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def inside(self, path: str) -> Path:
        """``path`` (relative to the root, or absolute) as a folder inside the root, never
        inside a ``.git`` folder; a bad path is a ``ConductorError`` saying what is wrong."""
        if "\x00" in path:
            raise ConductorError("path holds a NUL byte")
        if len(path) > MAX_PATH:
            raise ConductorError(f"path is {len(path)} characters long (at most {MAX_PATH})")
        try:
            full = (self.root / path).resolve() if path else self.root
            is_dir = full.is_dir()
        except (OSError, ValueError) as e:
            raise ConductorError(f"path {path[:80]!r} cannot be used: {e}") from None
        if full != self.root and self.root not in full.parents:
            raise UnsafePath(f"{path} is outside the workspace {self.root}")
        if ".git" in full.relative_to(self.root).parts:
            raise UnsafePath(f"{path} is inside a .git folder: jobs never run or write there")
        if not is_dir:
            raise ConductorError(f"{path or '.'} is not a folder in the workspace")
        return full

    async def fix(
        self,
        path: str = "",
        test: str = "",
        budget_usd: float | None = None,
        instruction: str = "",
        max_iterations: int | None = None,
        report: Report = _silent,
    ) -> dict[str, Any]:
        """Run the fix loop on the repository at ``path``: candidates judged in sandboxes,
        the verified state written once, a checkpoint before it."""
        repo = self.inside(path)
        config = load_config(repo, None, job_layer(test, max_iterations, budget_usd))
        if not config.test.command:
            raise ConductorError("no test command: pass test, or set [test] command")
        lines: list[str] = []
        sent: list[asyncio.Task[None]] = []

        def on_event(event: Event) -> None:  # called in the loop's task: report at once
            lines.append(describe_event(event))
            sent.append(asyncio.get_running_loop().create_task(report(len(lines), lines[-1])))

        try:
            async with Session(config) as session:
                result = await fix_repository(
                    session, FixRequest(instruction), Hooks(on_event=on_event)
                )
        finally:
            await asyncio.gather(*sent, return_exceptions=True)
        self.last[repo] = result
        return fix_summary(result)

    async def plan(
        self, task: str, files: list[str] | None = None, path: str = ""
    ) -> dict[str, Any]:
        """The conductor's plan for ``task`` (nothing runs)."""
        repo = self.inside(path)
        request = TaskRequest(task, files=tuple(files or ()))
        async with Session(load_config(repo)) as session:
            return as_data(await plan_task(session, request))

    async def undo(self, path: str = "", ref: str = "") -> dict[str, Any]:
        """Bring back the state before the last job (or checkpoint ``ref``)."""
        repo = self.inside(path)
        done = undo(repo, ref or None)
        return {
            "restored": done.restored.ref,
            "label": done.restored.label,
            "saved": done.saved.ref,
        }

    async def candidates(self, path: str = "") -> dict[str, Any]:
        """Every candidate of the last fix on ``path``: who wrote it and what the tests said."""
        repo = self.inside(path)
        found = self.last.get(repo)
        if found is None:
            raise ConductorError("no fix has run on this repository since the door opened")
        rows = [
            {
                "round": c.round,
                "lane": str(c.lane) or "plan",
                "worker": c.worker,
                "verdict": c.verdict.text() if c.verdict else "not judged",
                "green": c.green,
                "cost": c.step.cost,
            }
            for c in found.candidates
        ]
        return {"best": found.best, "candidates": rows}


def fix_summary(report: FixReport) -> dict[str, Any]:
    """What an agent needs from a fix: the verdict, the diff, the bill, the checkpoint."""
    return {
        "outcome": str(report.outcome),
        "passed": report.end.passed,
        "reason": report.reason,
        "tests": report.tests(),
        "tests_before": report.start.to_json(),
        "tests_after": report.end.to_json(),
        "written": report.written,
        "diff": report.diff,
        "kept": report.kept,
        "cost": report.cost,
        "seconds": round(report.seconds, 3),
        "checkpoint": report.checkpoint.ref,
        "undo": "call undo with this path to bring back the state before the fix",
    }
