"""``conductor-lsp eval``: a suite through the fix loop, strategies side by side."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..configure.load import load_config
from ..errors import ConfigError
from ..eval import TaskResult, by_strategy, evaluate, load_suite, parse_strategies
from ..eval.distributed import RayRunner
from ..eval.run import StrategyRow
from ..jobs import outcome_text
from ..storage.state import state_dir


def results_table(rows: list[StrategyRow]) -> Table:
    table = Table(title="eval")
    for col in ("strategy", "solved", "worker calls", "conductor calls", "tokens", "$", "time"):
        table.add_column(col, justify="left" if col == "strategy" else "right")
    for r in rows:
        table.add_row(
            r.strategy,
            f"{r.solved}/{r.tasks}",
            str(r.worker_calls),
            str(r.conductor_calls),
            str(r.tokens),
            f"{r.cost:.4f}",
            f"{r.seconds:.0f}s",
        )
    return table


def _line(r: TaskResult) -> str:
    state = "solved" if r.solved else f"not solved ({outcome_text(r.outcome, r.reason)})"
    if r.error:
        state = f"error: {r.error}"
    return (
        f"{r.strategy:>14} {r.task:<24} {state} - {r.worker_calls}+{r.conductor_calls} calls, "
        f"{r.tokens} tokens, ${r.cost:.4f}, {r.seconds:.1f}s"
    )


async def run_eval(root: Path, args: argparse.Namespace, console: Console) -> int:
    tasks = load_suite(args.suite)
    if args.tasks:
        wanted = {t.strip() for t in args.tasks.split(",")}
        unknown = wanted - {t.name for t in tasks}
        if unknown:
            raise ConfigError(f"no such task(s) in {args.suite}: {', '.join(sorted(unknown))}")
        tasks = [t for t in tasks if t.name in wanted]
    base = load_config(root, args.config)  # read once; each task and strategy varies it
    strategies = parse_strategies(args.strategy, base.workers)
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out: the results file to continue")
    out = args.out or state_dir(root) / "eval" / f"{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    console.print(
        f"{len(tasks)} tasks x {len(strategies)} strategies ({', '.join(strategies)}), "
        f"{args.max_iterations} rounds each, {args.jobs} at once",
        markup=False,
    )
    runner = RayRunner(args.ray, cpus=max(args.jobs, 1)) if args.ray else None
    if runner is not None:
        console.print(runner.describe(), markup=False, highlight=False)
    try:
        results = await evaluate(
            tasks,
            strategies,
            base,
            out=out,
            jobs=args.jobs,
            max_iterations=args.max_iterations,
            order=args.order,
            resume=args.resume,
            on_result=lambda r: console.print(_line(r), markup=False, highlight=False),
            runner=runner,
        )
    finally:
        if runner is not None:
            runner.close()
    console.print(results_table(by_strategy(results)))
    console.print(f"results: {out}", markup=False, highlight=False)
    return 0
