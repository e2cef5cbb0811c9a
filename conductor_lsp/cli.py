"""``conductor-lsp``: the same jobs as the editor, headless.

Library errors become CLI messages (exit 2) only here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .config import Config, load_config
from .doctor import report as doctor_report
from .errors import ConductorError
from .events import Event
from .jobs import Session
from .render import describe_event, plan_table, print_result
from .task import FileContext, Task


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="config file (default: conductor.toml, pyproject)")
    p.add_argument("--root", type=Path, default=None, help="workspace root (default: cwd)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="conductor-lsp", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    for name, help_ in (("plan", "print the conductor's plan"), ("run", "plan and run a task")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("task", help="what to do, in words")
        p.add_argument("--file", action="append", default=[], type=Path, help="context file")
        _common(p)
        if name == "plan":
            p.add_argument("--json", action="store_true", help="machine-readable output")
    d = sub.add_parser("doctor", help="which backends and workers are usable here")
    _common(d)
    return ap


def _task(args: argparse.Namespace, root: Path) -> Task:
    files = []
    for f in args.file:
        path = f if f.is_absolute() else root / f
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConductorError(f"cannot read --file {f}: {e}") from e
        rel = path.resolve().relative_to(root) if path.resolve().is_relative_to(root) else path
        files.append(FileContext(str(rel), text))
    return Task(args.task, files=tuple(files))


async def _plan(config: Config, args: argparse.Namespace, console: Console) -> int:
    session = Session(config)
    try:
        plan = await session.plan(_task(args, config.root))
    finally:
        await session.aclose()
    if args.json:
        print(json.dumps(plan.to_json(), indent=2))
    else:
        console.print(plan_table(plan))
        for note in plan.notes:
            console.print(f"note: {note}", markup=False)
    return 0


async def _run(config: Config, args: argparse.Namespace, console: Console) -> int:
    session = Session(config)

    def on_event(event: Event) -> None:
        console.print(describe_event(event), markup=False, highlight=False)

    try:
        result = await session.run(_task(args, config.root), on_event=on_event)
    finally:
        await session.aclose()
    console.print(plan_table(result.plan))
    print_result(console, result)
    return 0 if result.outcome == "done" else 1


def _doctor(config: Config, console: Console) -> int:
    table = Table(title="conductor-lsp doctor")
    for col in ("what", "status", "detail"):
        table.add_column(col, overflow="fold")
    style = {"ok": "green", "no": "red", "info": "dim"}
    for what, status, detail in doctor_report(config):
        table.add_row(what, f"[{style[status]}]{status}[/]", detail.replace("[", r"\["))
    console.print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    console = Console(stderr=False, highlight=False)
    err = Console(stderr=True)
    try:
        config = load_config(args.root or Path.cwd(), args.config)
        if args.command == "doctor":
            return _doctor(config, console)
        if args.command == "plan":
            return asyncio.run(_plan(config, args, console))
        if args.command == "run":
            return asyncio.run(_run(config, args, console))
    except ConductorError as e:
        err.print(f"conductor-lsp: error: {e}", markup=False, highlight=False)
        return 2
    except KeyboardInterrupt:
        err.print("conductor-lsp: interrupted")
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
