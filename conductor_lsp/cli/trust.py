"""``conductor-lsp trust [PATH]``: let a workspace's own configuration run commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..configure.trust import set_trusted, trusted_paths


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    t: argparse.ArgumentParser = sub.add_parser(
        "trust",
        help="let this workspace's own configuration (or those in a folder) run commands",
        parents=parents,
    )
    t.add_argument("--remove", action="store_true", help="trust it no more")
    t.add_argument("--list", action="store_true", help="the workspaces trusted")
    return t


def run_trust(root: Path, args: argparse.Namespace, console: Console) -> int:
    say = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    if args.list:
        for p in trusted_paths():
            say(str(p))
        return 0
    set_trusted(root, not args.remove)
    say(f"{'no longer trusted' if args.remove else 'trusted'}: {root}")
    return 0
