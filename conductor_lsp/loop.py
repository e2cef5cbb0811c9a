"""Fix and test: checkpoint, run tests, plan, run, apply edits, test again.

Stops on green, on budget (calls, $, seconds, iterations) or when stuck (same
failures after an edit, the same edit twice, or no applicable edit twice in a
row). Keeps the best state seen; never ends worse than it started.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import checkpoint as cp
from .budget import Meter
from .edits.parse import parse_edits
from .edits.paths import check_path
from .edits.workspace import apply_output_to_disk, read_text
from .engine import JobResult
from .errors import ConfigError, EditError
from .events import EventSink, LoopNote, ignore
from .jobs import Session
from .render import access_text
from .task import FileContext, Task
from .testrun import TestRun, run_tests
from .usage import Tally

Outcome = Literal["green", "budget", "stuck", "failed", "cancelled"]
DEFAULT_INSTRUCTION = (
    "Make the failing tests pass by fixing the code under test. "
    "Do not weaken, skip or delete tests."
)
MAX_CONTEXT_FILES = 8
MAX_FILE_CHARS = 60_000


@dataclass
class Iteration:
    index: int
    job: JobResult | None
    applied: list[str]
    edit_errors: str
    tests: TestRun | None


@dataclass
class FixReport:
    outcome: Outcome
    reason: str
    start: TestRun
    end: TestRun
    checkpoint: cp.Checkpoint
    iterations: list[Iteration] = field(default_factory=list)
    restored: str = ""
    diff: str = ""
    seconds: float = 0.0
    tallies: dict[str, Tally] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 0 if self.end.passed else 1


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)


def local_imports(root: Path, text: str) -> list[str]:
    """Workspace modules a file imports: the code under test is usually among them."""
    out = []
    for a, b in _IMPORT.findall(text):
        parts = (a or b).split(".")
        for base in (root, root / "src"):
            for cand in (
                base.joinpath(*parts).with_suffix(".py"),
                base.joinpath(*parts, "__init__.py"),
            ):
                if cand.is_file():
                    out.append(cand.relative_to(root).as_posix())
    return out


def context_files(root: Path, run: TestRun, deny: list[str], extra: list[str]) -> list[FileContext]:
    """Files named by the failures (tests, traceback frames, what tests import), safe and
    small enough to show."""
    names: list[str] = [*extra, *(f.file for f in run.failures)]
    names += re.findall(r"^([\w./-]+\.py):\d+", run.output, re.M)
    out: list[FileContext] = []
    queue = list(dict.fromkeys(n for n in names if n))
    seen: set[str] = set()
    while queue and len(out) < MAX_CONTEXT_FILES:
        rel = queue.pop(0)
        if rel in seen:
            continue
        seen.add(rel)
        try:
            disk = read_text(check_path(root, rel, deny))
        except EditError:
            continue  # refused paths are never shown to models either
        if disk is not None and len(disk.text) <= MAX_FILE_CHARS:
            out.append(FileContext(rel, disk.text))
            queue += [m for m in local_imports(root, disk.text) if m not in seen]
    return out


def describe_round(job: JobResult, applied: list[str], errors: str, tests: TestRun | None) -> str:
    """What the conductor is told about the previous round (its recursion)."""
    steps = "\n".join(
        f"  {i}. {s.worker} ({s.role}, sees {access_text(s.access)}): {s.subtask}"
        for i, s in enumerate(job.plan.steps)
    )
    lines = [
        f"Plan ({job.plan.source}):\n{steps}",
        f"Job outcome: {job.outcome} {job.reason}".rstrip(),
    ]
    lines.append(f"Edits applied to: {', '.join(applied)}" if applied else "No edit was applied.")
    if errors:
        lines.append(f"Edit errors:\n{errors}")
    if tests is not None:
        lines.append(
            f"Tests afterwards: {'PASSED' if tests.passed else f'{tests.failing} failing'}"
        )
    return "\n".join(lines)


class FixLoop:
    def __init__(
        self,
        session: Session,
        *,
        instruction: str = DEFAULT_INSTRUCTION,
        test_command: str | None = None,
        max_iterations: int | None = None,
        on_event: EventSink = ignore,
        deny: list[str] | None = None,
        threshold: float | None = None,
    ) -> None:
        cfg = session.config
        self.session = session
        self.root = cfg.root
        self.instruction = instruction
        self.command = test_command or cfg.test.command
        if not self.command:
            raise ConfigError("no test command: set [test] command or pass --test")
        self.max_iterations = max_iterations or cfg.budget.max_iterations
        self.on_event = on_event
        self.deny = deny if deny is not None else cfg.edits.all_deny()
        self.threshold = threshold if threshold is not None else cfg.edits.fuzzy_threshold
        self.meter = Meter(cfg.budget)
        #: Called with every test run (the server turns failures into diagnostics).
        self.on_tests: Callable[[TestRun], None] = lambda run: None

    def note(self, iteration: int, message: str) -> None:
        self.on_event(LoopNote(iteration, message))

    async def tests(self, previous: TestRun | None) -> TestRun:
        """Failing tests first; the whole suite only once they pass."""
        timeout = self.session.config.test.timeout
        if previous is not None and previous.structured and previous.failures:
            ids = [f.test_id for f in previous.failures]
            first = await run_tests(self.command, self.root, timeout, select=ids)
            if not first.passed:
                self.on_tests(first)
                return first
        run = await run_tests(self.command, self.root, timeout)
        self.on_tests(run)
        return run

    async def run(self) -> FixReport:
        started = time.monotonic()
        start_cp = await asyncio.to_thread(
            cp.create, self.root, f"before fix: {self.instruction[:60]}"
        )
        self.note(0, f"checkpoint {start_cp.ref}")
        first = await self.tests(None)
        self.note(0, f"tests: {'passed' if first.passed else f'{first.failing} failing'}")
        report = FixReport("green", "", first, first, start_cp)
        best = (first.failing, start_cp)
        current, previous = first, ""
        seen_edits: set[str] = set()
        no_edit_streak = 0
        try:
            for k in range(1, self.max_iterations + 1):
                if current.passed:
                    break
                why = self.meter.exhausted()
                if why:
                    report.outcome, report.reason = "budget", why
                    break
                task = Task(
                    self.instruction,
                    files=tuple(context_files(self.root, current, self.deny, [])),
                    test_failures=current.summary(),
                    previous=previous,
                )
                job = await self.session.run(task, meter=self.meter, on_event=self.on_event)
                for name, tally in job.tallies.items():
                    report.tallies.setdefault(name, Tally()).merge(tally)
                if job.outcome == "cancelled":
                    report.outcome, report.reason = "cancelled", job.reason
                    break
                edits, _ = parse_edits(job.output)
                signature = hashlib.sha256(
                    repr(sorted((e.path, e.search, e.replace) for e in edits)).encode()
                ).hexdigest()
                if edits and signature in seen_edits:
                    report.iterations.append(Iteration(k, job, [], "the same edit again", None))
                    report.outcome, report.reason = "stuck", "the same edit was proposed twice"
                    break
                seen_edits.add(signature)
                disk = apply_output_to_disk(
                    self.root, job.output, deny=self.deny, threshold=self.threshold
                )
                errors = disk.result.report()
                if not disk.written:
                    no_edit_streak += 1
                    why = errors or "the output held no edit"
                    self.note(k, f"no edit applied: {why.splitlines()[0]}")
                    report.iterations.append(Iteration(k, job, [], why, None))
                    previous = describe_round(job, [], why, None)
                    if job.outcome == "budget":
                        report.outcome, report.reason = "budget", job.reason
                        break
                    if no_edit_streak >= 2:
                        report.outcome, report.reason = "stuck", "no applicable edit twice in a row"
                        break
                    continue
                no_edit_streak = 0
                self.note(k, f"edited {', '.join(disk.written)} ({', '.join(disk.result.matches)})")
                after = await self.tests(current)
                self.note(k, f"tests: {'passed' if after.passed else f'{after.failing} failing'}")
                report.iterations.append(Iteration(k, job, disk.written, errors, after))
                previous = describe_round(job, disk.written, errors, after)
                if not after.selected and after.failing < best[0]:  # only whole runs compare
                    label = f"best state, iteration {k}"
                    best = (after.failing, await asyncio.to_thread(cp.create, self.root, label))
                same = after.signature() == current.signature()
                current = after
                if same and not after.passed:
                    report.outcome, report.reason = "stuck", "the same failures after an edit"
                    break
            else:
                if not current.passed:
                    report.outcome = "budget"
                    report.reason = f"iteration budget spent ({self.max_iterations})"
            if current.passed:
                report.outcome, report.reason = "green", ""
        finally:
            if current.selected:  # a partial run says nothing about the other tests
                current = await self.tests(None)
            if not current.passed and current.failing > best[0]:
                await asyncio.to_thread(cp.restore, self.root, best[1])
                report.restored = best[1].ref
                self.note(0, f"restored the best state ({best[1].label}): {best[1].ref}")
                current = await self.tests(None)
            report.end = current
            report.diff = await asyncio.to_thread(cp.diff, self.root, start_cp)
            report.seconds = time.monotonic() - started
        if report.outcome == "green" and not current.passed:
            report.outcome = "failed"
        return report


__all__ = ["DEFAULT_INSTRUCTION", "FixLoop", "FixReport", "Iteration"]
