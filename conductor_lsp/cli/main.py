"""``conductor-lsp``: the same jobs as the editor, headless.

Library errors become CLI messages (exit 2) only here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..config.schema import Config, LearnConfig
from ..configure.load import load_config
from ..edits.paths import denied_by
from ..errors import ConductorError
from ..fix import checkpoint, undo
from ..fix.loop import DEFAULT_INSTRUCTION, FixLoop
from ..runtime.episodes import EpisodeLog
from ..runtime.events import Event
from ..runtime.session import Session
from ..task import FileContext, Task
from .doctor import report as doctor_report
from .episodes import show_episodes
from .evaluate import run_eval
from .render import describe_event, plan_notes, plan_table, print_fix_report, print_result
from .train import add_parser as add_train_parser
from .train import run_train


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
    d.add_argument("path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)")
    d.add_argument("--config", type=Path, help="config file")
    f = sub.add_parser("fix", help="fix and test until green or out of budget")
    f.add_argument("path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)")
    f.add_argument("--test", help="test command (default: [test] command)")
    f.add_argument("--max-iterations", type=int, help="most fix-and-test rounds")
    f.add_argument("--budget-usd", type=float, help="most dollars for the whole loop")
    f.add_argument("--instruction", help="what to do besides making the tests pass")
    f.add_argument("--config", type=Path, help="config file")
    e = sub.add_parser("eval", help="run a task suite with strategies side by side")
    e.add_argument("suite", type=Path, help="a folder of tasks (each with a task.toml)")
    e.add_argument(
        "--strategy",
        default="conductor,static,single:*",
        help="comma-separated: conductor, static, search, pipeline, single:NAME, single:* "
        "(default: %(default)s)",
    )
    e.add_argument("--config", type=Path, help="config file with [conductor] and [workers.*]")
    e.add_argument("--jobs", type=int, default=1, help="tasks run at once (default: 1)")
    e.add_argument("--max-iterations", type=int, default=2, help="fix rounds per task")
    e.add_argument(
        "--out", type=Path, default=None, help="results (JSONL; default: .conductor/eval/...)"
    )
    e.add_argument("--tasks", help="comma-separated task names to run (default: all)")
    h = sub.add_parser("episodes", help="what the jobs recorded for the conductor to learn")
    h.add_argument("path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)")
    h.add_argument("--summary", action="store_true", help="counts per plan shape")
    h.add_argument("--file", type=Path, help="an episodes file (default: [learn] episodes)")
    h.add_argument("--config", type=Path, help="config file")
    add_train_parser(sub)
    s = sub.add_parser("serve", help="run the language server (stdio)")
    s.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead (debugging)")
    s.add_argument("--log-file", help="also log to this file")
    u = sub.add_parser("undo", help="restore the last checkpoint")
    u.add_argument("path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)")
    u.add_argument("--list", action="store_true", help="list checkpoints, newest first")
    u.add_argument("--ref", help="restore this checkpoint instead of the newest")
    return ap


def _task(args: argparse.Namespace, config: Config) -> Task:
    """The task and its --file context; files on the deny list never reach a model."""
    files = []
    root = config.root
    for f in args.file:
        path = (f if f.is_absolute() else root / f).resolve()
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        if denied_by(name, config.edits.all_deny()):
            raise ConductorError(f"--file {f} matches the deny list; it is never sent to models")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConductorError(f"cannot read --file {f}: {e}") from e
        files.append(FileContext(name, text))
    return Task(args.task, files=tuple(files))


async def _plan(config: Config, args: argparse.Namespace, console: Console) -> int:
    session = Session(config)
    try:
        plan = await session.plan(_task(args, config))
    finally:
        await session.aclose()
    if args.json:
        print(json.dumps(plan.to_json(), indent=2))
    else:
        console.print(plan_table(plan))
        for line in plan_notes(plan):
            console.print(line, markup=False, highlight=False)
    return 0


@contextlib.contextmanager
def progress(console: Console) -> Iterator[Callable[[Event], None]]:
    """Event lines as they come; in a terminal also a live spinner with the latest one."""
    if not console.is_terminal:
        yield lambda e: console.print(describe_event(e), markup=False, highlight=False)
        return
    with console.status("starting...") as status:

        def on_event(event: Event) -> None:
            line = describe_event(event)
            console.print(line, markup=False, highlight=False)
            status.update(Text(line))

        yield on_event


async def _run(config: Config, args: argparse.Namespace, console: Console) -> int:
    session = Session(config)
    try:
        with progress(console) as on_event:
            result = await session.run(_task(args, config), on_event=on_event)
    finally:
        await session.aclose()
    console.print(plan_table(result.plan))
    for line in plan_notes(result.plan):
        console.print(line, markup=False, highlight=False)
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


async def _fix(config: Config, args: argparse.Namespace, console: Console) -> int:
    session = Session(config)
    try:
        with progress(console) as on_event:
            loop = FixLoop(
                session,
                instruction=args.instruction or DEFAULT_INSTRUCTION,
                on_event=on_event,
            )
            report = await loop.run()
    finally:
        await session.aclose()
    print_fix_report(console, report)
    return report.exit_code


def _undo(root: Path, args: argparse.Namespace, console: Console) -> int:
    if args.list:
        points = checkpoint.list_checkpoints(root)
        for p in points:
            console.print(p.describe(), markup=False, highlight=False)
        if not points:
            console.print("no checkpoints")
        return 0
    chosen = undo.choose(root, args.ref)
    before = checkpoint.restore(root, chosen)
    _episodes_of(root).undo(chosen.ref)  # the job's plans did not help, as episodes go
    console.print(f"restored {chosen.ref} ({chosen.label})", markup=False, highlight=False)
    console.print(f"the state it replaced is saved as {before.ref}", markup=False, highlight=False)
    return 0


def _episodes_of(root: Path) -> EpisodeLog:
    """The workspace's episode log, even when its configuration does not load."""
    try:
        learn = load_config(root).learn
    except ConductorError:
        return EpisodeLog(root / LearnConfig().episodes, root=root)
    return EpisodeLog(root / learn.episodes if learn.record else None, root=root)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags as the last configuration layer, so they reach everything: the
    test command of ``fix --test`` is also what the tests tool worker runs."""
    out: dict[str, Any] = {}
    if args.command != "fix":
        return out
    if args.test:
        out["test"] = {"command": args.test}
    budget: dict[str, Any] = {}
    if args.max_iterations:
        budget["max_iterations"] = args.max_iterations
    if args.budget_usd is not None:
        budget["max_cost"] = args.budget_usd
    if budget:
        out["budget"] = budget
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    console = Console(stderr=False, highlight=False)
    err = Console(stderr=True)
    try:
        if args.command == "serve":
            from ..server import serve

            serve(args.tcp, args.log_file)
            return 0
        root = (getattr(args, "path", None) or getattr(args, "root", None) or Path.cwd()).resolve()
        if args.command in ("eval", "train"):
            root = Path.cwd().resolve()
        if not root.is_dir():
            raise ConductorError(f"workspace {root} is not a directory")
        if args.command in ("plan", "run") and not args.task.strip():
            raise ConductorError("the task is empty: say in words what to do")
        if args.command == "undo":
            return _undo(root, args, console)
        if args.command == "eval":
            return asyncio.run(run_eval(root, args, console))
        if args.command == "episodes":
            return show_episodes(root, args, console)
        if args.command == "train":
            return run_train(root, args, console)
        config = load_config(root, args.config, _overrides(args))
        if args.command == "fix":
            return asyncio.run(_fix(config, args, console))
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
