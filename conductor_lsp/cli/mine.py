"""``conductor-lsp mine [PATH] --out SUITE``: the repository's past bug fixes as a suite."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from ..mine import judge, mine


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "mine",
        help="turn the history's bug fixes (a commit with a test that proves it) into a suite",
        parents=parents,
    )
    p.add_argument("--out", type=Path, required=True, help="the suite folder (outside PATH)")
    p.add_argument("--max", type=int, default=0, help="stop after N tasks (default: all)")
    p.add_argument("--since", default="", help="only commits after this ref")
    p.add_argument("--jobs", type=int, default=1, help="commits checked at once")
    p.add_argument(
        "--merges",
        action="store_true",
        help="mine merges too, each as the change it brought to its first parent "
        "(histories of merged pull requests)",
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="check each commit on Ray: a cluster's address (auto, ray://HOST:10001) or local",
    )
    return p


def run_mine(root: Path, args: argparse.Namespace, console: Console) -> int:
    say = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    ray = None
    if args.ray:
        from ..mine.distributed import RayChecker

        ray = RayChecker(args.ray, cpus=max(args.jobs, 1))
        say(ray.describe())
    try:
        report = asyncio.run(
            mine(root, args.out, max_tasks=args.max, since=args.since, jobs=args.jobs,
                 merges=args.merges, checker=ray or judge, on_line=say)
        )  # fmt: skip
    finally:
        if ray is not None:
            ray.close()
    for line in report.lines():
        say(line)
    say(f"suite: {args.out.resolve()} (conductor-lsp eval {args.out})")
    return 0
