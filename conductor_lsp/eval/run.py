"""Run a suite through the fix loop with several strategies, side by side.

Every (strategy, task) pair runs in a fresh temporary workspace (a git repository
of the task's files) with the same configuration, budget and rounds; only the way
plans are made differs. Results are data: one ``TaskResult`` per pair, written as
a JSONL line as soon as it is known, with the path of the pair's trace folder.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.schema import Config
from ..configure.load import derive, layered
from ..errors import ConductorError, EpisodeFormatError
from ..jobs import FixOutcome, FixRequest, Session, fix_repository
from ..storage.records import as_data, read
from ..usage import total
from .suite import SuiteTask, prepare


@dataclass
class TaskResult:
    strategy: str
    task: str
    kind: str
    solved: bool
    outcome: FixOutcome
    reason: str
    rounds: int
    worker_calls: int
    conductor_calls: int
    tokens: int
    cost: float
    seconds: float
    traces: str
    #: Plan sources, round by round (a fallback says why).
    plans: list[str] = field(default_factory=list)
    error: str = ""
    #: Candidate answers judged in sandboxes, and the one whose state the task ended with.
    candidates: int = 0
    best: str = ""


async def run_one(
    task: SuiteTask,
    strategy: str,
    layer: Mapping[str, Any],
    base: Config,
    traces: Path,
    max_iterations: int,
) -> TaskResult:
    """One task with one strategy, in a throwaway workspace; traces kept under ``traces``."""
    started = time.monotonic()
    trace_dir = traces / strategy.replace(":", "-") / task.name
    with tempfile.TemporaryDirectory(prefix="conductor-eval-") as tmp:
        repo = prepare(task, Path(tmp))
        overrides = layered(
            layer,
            {
                "test": {"command": task.test_command()},
                "budget": {"max_iterations": max_iterations},
                "trace": {"dir": str(trace_dir), "enabled": True},
                "learn": {"episodes": str(traces.parent / (traces.name + "-episodes.jsonl"))},
            },
        )
        try:  # a configuration or checkpoint error is this pair's result, not the end
            session = Session(derive(base, overrides, root=repo))
        except ConductorError as e:
            return _failed(task, strategy, started, trace_dir, e)
        try:
            async with session:
                report = await fix_repository(session, FixRequest(task.instruction))
        except ConductorError as e:
            return _failed(task, strategy, started, trace_dir, e)
    workers = total(report.tallies)
    return TaskResult(
        strategy=strategy,
        task=task.name,
        kind=task.kind,
        solved=report.end.passed,
        outcome=report.outcome,
        reason=report.reason,
        rounds=len(report.rounds),
        worker_calls=workers.calls,
        conductor_calls=report.conductor.calls,
        tokens=workers.usage.total + report.conductor.usage.total,
        cost=report.cost,
        seconds=time.monotonic() - started,
        traces=str(trace_dir),
        plans=[a.run.plan.source for r in report.rounds for a in r.attempts],
        candidates=sum(1 for c in report.candidates if c.verdict is not None),
        best=report.best,
    )


def _failed(
    task: SuiteTask, strategy: str, started: float, traces: Path, error: Exception
) -> TaskResult:
    return TaskResult(
        strategy, task.name, task.kind, False, FixOutcome.ERROR, "", 0, 0, 0, 0, 0.0,
        time.monotonic() - started, str(traces), error=f"{type(error).__name__}: {error}",
    )  # fmt: skip


async def evaluate(
    tasks: Sequence[SuiteTask],
    strategies: Mapping[str, Mapping[str, Any]],
    base: Config,
    *,
    out: Path,
    jobs: int = 1,
    max_iterations: int = 2,
    on_result: Callable[[TaskResult], None] = lambda r: None,
    order: str = "strategies",
    resume: bool = False,
    runner: Runner | None = None,
) -> list[TaskResult]:
    """Every task with every strategy, at most ``jobs`` at once; results in ``out`` (JSONL)
    as they come, traces beside it. ``order`` "tasks" runs task by task, so a run cut
    short still compares every strategy on the same tasks; ``resume`` keeps the pairs
    ``out`` already holds and runs the rest (a suite that takes hours, across sittings).
    ``runner`` runs one pair (default ``run_one`` here; ``distributed.RayRunner`` on Ray)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    kept = out.read_text(encoding="utf-8") if resume and out.exists() else ""
    earlier = read_results(kept)
    done = {(r.task, r.strategy) for r in earlier}
    names = {t.name: i for i, t in enumerate(tasks)}
    out.parent.mkdir(parents=True, exist_ok=True)
    # Absolute: each task runs in its own throwaway workspace, where a relative path would
    # put the traces and episodes (and delete them with it).
    traces = (out.parent / (out.stem + "-traces")).absolute()
    limit = asyncio.Semaphore(max(1, jobs))
    results = [r for r in earlier if r.task in names and r.strategy in strategies]
    with out.open("a" if resume else "w", encoding="utf-8") as sink:
        if kept and not kept.endswith("\n"):
            sink.write("\n")  # after a line cut short

        async def one(task: SuiteTask, name: str, layer: Mapping[str, Any]) -> None:
            async with limit:
                result = await (runner or run_one)(task, name, layer, base, traces, max_iterations)
            results.append(result)
            sink.write(json.dumps(as_data(result)) + "\n")
            sink.flush()
            on_result(result)

        runs = [(t, n, x) for t, n, x in _runs(tasks, strategies, order) if (t.name, n) not in done]
        await asyncio.gather(*(one(t, n, layer) for t, n, layer in runs))
    rank = {name: i for i, name in enumerate(strategies)}
    return sorted(results, key=lambda r: (rank[r.strategy], names[r.task]))


ORDERS = ("strategies", "tasks")
#: One (task, strategy) run: ``run_one``'s signature.
Runner = Callable[[SuiteTask, str, Mapping[str, Any], Config, Path, int], Awaitable[TaskResult]]


def read_results(text: str) -> list[TaskResult]:
    """The rows of a results file's text; a line cut short by a killed run is skipped."""
    rows = []
    for line in text.splitlines():
        try:
            rows.append(read(json.loads(line), TaskResult, "a result"))
        except (ValueError, EpisodeFormatError):
            continue
    return rows


def _runs(
    tasks: Sequence[SuiteTask], strategies: Mapping[str, Mapping[str, Any]], order: str
) -> list[tuple[SuiteTask, str, Mapping[str, Any]]]:
    """Strategy by strategy: no strategy's task follows another's same first prompt, which
    a server's prompt cache answers faster than a fresh one. Task by task, the strategy
    that goes first rotates, so that head start falls on each in turn."""
    items = list(strategies.items())
    if order == "strategies":
        return [(t, name, layer) for name, layer in items for t in tasks]
    runs = []
    for i, t in enumerate(tasks):
        turn = items[i % len(items) :] + items[: i % len(items)]
        runs += [(t, name, layer) for name, layer in turn]
    return runs


@dataclass
class StrategyRow:
    strategy: str
    solved: int
    tasks: int
    worker_calls: int
    conductor_calls: int
    tokens: int
    cost: float
    seconds: float


def by_strategy(results: Sequence[TaskResult]) -> list[StrategyRow]:
    """One row per strategy, in the order they were run."""
    rows: dict[str, StrategyRow] = {}
    for r in results:
        row = rows.setdefault(r.strategy, StrategyRow(r.strategy, 0, 0, 0, 0, 0, 0.0, 0.0))
        row.solved += r.solved
        row.tasks += 1
        row.worker_calls += r.worker_calls
        row.conductor_calls += r.conductor_calls
        row.tokens += r.tokens
        row.cost += r.cost
        row.seconds += r.seconds
    return list(rows.values())
