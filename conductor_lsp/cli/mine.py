"""``conductor-lsp mine [PATH] --out SUITE``: the repository's past bug fixes as a suite."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from ..mine import mine


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
    return p


def run_mine(root: Path, args: argparse.Namespace, console: Console) -> int:
    say = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    report = asyncio.run(
        mine(root, args.out, max_tasks=args.max, since=args.since, jobs=args.jobs, on_line=say)
    )
    for line in report.lines():
        say(line)
    say(f"suite: {args.out.resolve()} (conductor-lsp eval {args.out})")
    return 0
