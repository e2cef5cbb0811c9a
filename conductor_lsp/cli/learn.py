"""``conductor-lsp learn [PATH]``: the repository's history mined, run on the pool within
a budget, and fitted into the routing policy."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from ..configure import load_config
from ..learn.repository import learn
from ..learn.train import USE_IT


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "learn",
        help="mine the history, run the pool on it within a budget, fit the routing policy",
        parents=parents,
    )
    p.add_argument("--budget-usd", type=float, default=1.0, help="most $ for the runs")
    p.add_argument("--seconds", type=float, default=3600.0, help="most seconds for the runs")
    p.add_argument("--max", type=int, default=0, help="mine at most N tasks (default: all)")
    p.add_argument("--merges", action="store_true", help="mine merges too (see mine --help)")
    p.add_argument(
        "--shapes",
        action="store_true",
        help="run every pair in the architect and review shapes too",
    )
    return p


def run_learn(root: Path, args: argparse.Namespace, console: Console) -> int:
    say = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    config = load_config(root, args.config)
    done = asyncio.run(
        learn(
            root,
            config,
            budget_usd=args.budget_usd,
            seconds=args.seconds,
            max_tasks=args.max,
            merges=args.merges,
            shapes=args.shapes,
            on_line=say,
        )
    )
    say(f"{done.ran} task(s) run this time of {done.tasks} mined; ${done.spent:.4f} spent")
    if done.stopped:
        say(f"stopped: {done.stopped} (run learn again to go on)")
    if done.policy is not None:
        held = ", ".join(f"{k} {v}" for k, v in done.held_out.items()) or "no held-out task run"
        say(f"policy: {done.policy} (held out, the newest tenth: {held})")
        if not config.conductor.policy:
            rel = done.policy.relative_to(root) if done.policy.is_relative_to(root) else done.policy
            say(USE_IT.format(rel.as_posix()))
    return 0
