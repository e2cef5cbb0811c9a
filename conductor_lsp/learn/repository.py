"""``conductor-lsp learn [PATH]``: the conductor learns the repository before the user asks
for anything. It mines the history (into the user cache, outside the workspace), runs the
pool on the mined tasks (``single:*`` in both wordings, one round each, so every
action has a verdict; with ``shapes``, every pair in the architect and review shapes) within a $
and a time budget, and fits the routing policy where the configuration points. Older
commits train; the newest tenth is held out, so no task from the future reaches the
fit. Every step appends to files it resumes from: it is safe to stop at any time and
start again."""

from __future__ import annotations

import hashlib
import math
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config.schema import Config
from ..errors import ConfigError
from ..eval import SuiteTask, evaluate, load_suite, parse_strategies
from ..eval.run import TaskResult, read_results
from ..mine import mine
from ..policy import Policy, eval_episodes, examples_from, scores, train_policy
from ..policy.offline import recorded
from ..storage.cache import cache_home

#: Every worker alone in both wordings: every single-call action has a verdict on every
#: task (``search:wording`` asked the second wording only where the floor's call was red,
#: and asked the floor's call again).
STRATEGIES = "single:*,single:*@cause"
#: With ``shapes``: every pair of workers in the architect and review shapes too.
SHAPES = "architect:*,review:*"
DEFAULT_POLICY = ".conductor/policy.json"


@dataclass
class Learned:
    tasks: int
    ran: int
    spent: float
    policy: Path | None
    held_out: dict[str, float]
    stopped: str = ""


def work_dir(root: Path) -> Path:
    """Where a repository's mined suite and rows live (one folder per workspace)."""
    key = hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:12]
    return cache_home() / "learn" / f"{root.resolve().name}-{key}"


def by_date(tasks: Sequence[SuiteTask]) -> list[SuiteTask]:
    """Oldest commit first (the date the mining recorded)."""

    def when(t: SuiteTask) -> str:
        spec = tomllib.loads((t.path / "task.toml").read_text(encoding="utf-8"))
        return str(spec.get("mined", {}).get("date", ""))

    return sorted(tasks, key=lambda t: (when(t), t.name))


def split(tasks: Sequence[SuiteTask]) -> tuple[list[SuiteTask], list[SuiteTask]]:
    """(older 90% to fit on, the newest tenth held out); one task: all fit."""
    ordered = by_date(tasks)
    held = math.ceil(len(ordered) / 10) if len(ordered) > 1 else 0
    return ordered[: len(ordered) - held], ordered[len(ordered) - held :]


def _rows(path: Path) -> list[TaskResult]:
    return read_results(path.read_text(encoding="utf-8")) if path.is_file() else []


def _spent(*files: Path) -> float:
    return sum(r.cost for f in files for r in _rows(f))


async def learn(
    root: Path,
    config: Config,
    *,
    budget_usd: float,
    seconds: float,
    max_tasks: int = 0,
    merges: bool = False,
    shapes: bool = False,
    on_line: Callable[[str], None] = lambda line: None,
) -> Learned:
    work = work_dir(root)
    mined = await mine(root, work / "suite", max_tasks=max_tasks, merges=merges, on_line=on_line)
    for line in mined.lines():
        on_line(line)
    if not mined.tasks:
        raise ConfigError("no task mined: no commit fixed code with a test that proves it")
    fit_rows, held_rows = work / "fit.jsonl", work / "held.jsonl"
    older, newest = split(load_suite(work / "suite"))
    strategies = parse_strategies(
        f"{STRATEGIES},{SHAPES}" if shapes else STRATEGIES, config.workers
    )
    deadline = time.monotonic() + seconds
    spent, ran, stopped = _spent(fit_rows, held_rows), 0, ""
    done = {(r.task, r.strategy) for f in (fit_rows, held_rows) for r in _rows(f)}
    for task, rows in [*((t, fit_rows) for t in older), *((t, held_rows) for t in newest)]:
        if all((task.name, s) in done for s in strategies):
            continue  # run before this one stopped
        if spent >= budget_usd or time.monotonic() >= deadline:
            stopped = f"budget reached (${spent:.4f} spent)" if spent >= budget_usd else "time up"
            break
        results = await evaluate(
            [task], strategies, config, out=rows, max_iterations=1, resume=True
        )
        new = [r for r in results if r.task == task.name]
        spent = _spent(fit_rows, held_rows)
        ran += 1
        solved = sum(r.solved for r in new)
        on_line(f"ran {task.name}: {solved}/{len(new)} actions green, ${spent:.4f} spent")
    if not fit_rows.is_file():
        return Learned(len(mined.tasks), ran, spent, None, {}, stopped or "nothing ran")
    policy_path = root / (config.conductor.policy or DEFAULT_POLICY)
    train_policy([fit_rows], [], policy_path, log=on_line)
    held = _held_out(policy_path, held_rows)
    return Learned(len(mined.tasks), ran, spent, policy_path, held, stopped)


def _held_out(policy_path: Path, held_rows: Path) -> dict[str, float]:
    """The fitted policy scored on the newest tenth (never fitted on), kept in the file."""
    if not held_rows.is_file() or not eval_episodes(held_rows).is_file():
        return {}
    policy = Policy.load(policy_path)
    figures = scores(policy, examples_from(recorded([eval_episodes(held_rows)]), policy))
    policy.about["held_out"] = figures
    policy.about["held_out_is"] = "the newest tenth of the mined commits"
    policy.save(policy_path)
    return figures
