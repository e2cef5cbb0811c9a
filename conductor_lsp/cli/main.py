"""``conductor-lsp``: the same jobs as the editor, headless. Library errors become CLI
messages (exit 2) only here; ``DESCRIPTION`` is what ``--help`` tells a user."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..config.schema import Config
from ..configure.load import job_layer, load_config
from ..errors import ConductorError
from ..eval import ORDERS
from ..jobs import (
    Event,
    FixReport,
    FixRequest,
    Hooks,
    RunOutcome,
    Session,
    TaskRequest,
    checkpoints,
    describe_event,
    fix_repository,
    plan_task,
    run_task,
    undo,
)
from ..storage.records import as_data
from ..version import __version__
from .doctor import print_doctor
from .evaluate import run_eval
from .init import add_parser as add_init_parser
from .init import run_init
from .learn import add_parser as add_learn_parser
from .learn import run_learn
from .mine import add_parser as add_mine_parser
from .mine import run_mine
from .render import (
    SMOKE_TEST_NOTE,
    plan_notes,
    plan_table,
    print_fix_report,
    print_model_stats,
    print_result,
    smoke_test_default,
)
from .review import terminal_reviewer
from .show_episodes import show_episodes
from .train import add_parser as add_train_parser
from .train import run_train
from .trust import add_parser as add_trust_parser
from .trust import run_trust

#: Where a command's workspace comes from: its PATH argument, --root, or the current folder.
Handler = Callable[[Path, argparse.Namespace, Console], int]


DESCRIPTION = """\
A conducted team of coding models behind your editor and your command line: each task
gets a short plan of steps for your models, every candidate answer is judged by your
tests in a sandbox, and only a verified fix is written, once, with a checkpoint to undo.

Start here:
  conductor-lsp init [PATH]                  write conductor.toml from the models you have
  conductor-lsp fix [PATH] --test "CMD"      fix until the tests pass (undo: conductor-lsp undo)
  conductor-lsp run "TASK" [PATH]            plan and run one task, print the answer
  conductor-lsp doctor [PATH] [--check]      what can run here, and why not
"""


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="conductor-lsp",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Each command has its own --help. Docs: docs/commands.md in the clone.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    config = argparse.ArgumentParser(add_help=False)
    config.add_argument(
        "--config", type=Path, help="config file (default: conductor.toml, pyproject.toml)"
    )
    path = argparse.ArgumentParser(add_help=False)
    path.add_argument(
        "path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)"
    )
    sub = ap.add_subparsers(dest="command", required=True)
    _add_task_commands(sub, config)
    d = sub.add_parser(
        "doctor", help="which backends and workers are usable here", parents=[path, config]
    )
    d.add_argument(
        "--check",
        action="store_true",
        help="ask each provider for its models with the key (without it a key is only 'set')",
    )
    d.set_defaults(func=_doctor)
    _add_fix(sub, [path, config])
    _add_eval(sub, [config])
    h = sub.add_parser(
        "episodes", help="what the jobs recorded for the conductor to learn", parents=[path, config]
    )
    h.add_argument("--summary", action="store_true", help="counts per plan shape")
    h.add_argument("--file", type=Path, help="an episodes file (default: [learn] episodes)")
    h.set_defaults(func=show_episodes)
    add_train_parser(sub, [config]).set_defaults(func=run_train)
    add_init_parser(sub, [path]).set_defaults(func=run_init)
    add_mine_parser(sub, [path]).set_defaults(func=run_mine)
    add_learn_parser(sub, [path, config]).set_defaults(func=run_learn)
    s = sub.add_parser("serve", help="run the language server (stdio)")
    s.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead (debugging)")
    s.add_argument("--log-file", help="also log to this file")
    s.set_defaults(func=None)
    m = sub.add_parser("mcp", help="serve MCP over stdio (the fix for agents)", parents=[path])
    m.set_defaults(func=_mcp)
    add_trust_parser(sub, [path]).set_defaults(func=run_trust)
    u = sub.add_parser("undo", help="restore the last checkpoint", parents=[path])
    u.add_argument("--list", action="store_true", help="list checkpoints, newest first")
    u.add_argument("--ref", help="restore this checkpoint instead of the newest")
    u.set_defaults(func=_undo)
    return ap


Subparsers = Any  # argparse's _SubParsersAction, which it does not export


def _add_task_commands(sub: Subparsers, config: argparse.ArgumentParser) -> None:
    for name, help_, func in (
        ("plan", "print the conductor's plan", _plan),
        ("run", "plan and run a task", _run),
    ):
        p = sub.add_parser(name, help=help_, parents=[config])
        p.add_argument("task", help="what to do, in words")
        p.add_argument(
            "path", nargs="?", type=Path, default=None, help="workspace root (default: cwd)"
        )
        p.add_argument("--file", action="append", default=[], type=Path, help="context file")
        # The old spelling of PATH, kept so scripts that use it go on working.
        p.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=func)


def _add_fix(sub: Subparsers, parents: list[argparse.ArgumentParser]) -> None:
    f = sub.add_parser("fix", help="fix and test until green or out of budget", parents=parents)
    f.add_argument("--test", help="test command (default: [test] command)")
    f.add_argument("--max-iterations", type=int, help="most fix-and-test rounds")
    f.add_argument("--budget-usd", type=float, help="most dollars for the whole loop")
    f.add_argument("--instruction", help="what to do besides making the tests pass")
    f.add_argument(
        "--review",
        action="store_true",
        help="accept or reject the fix hunk by hunk before it is written (y/n/r: with a reason)",
    )
    f.set_defaults(func=_fix)


def _add_eval(sub: Subparsers, parents: list[argparse.ArgumentParser]) -> None:
    e = sub.add_parser("eval", help="run a task suite's strategies side by side", parents=parents)
    e.add_argument("suite", type=Path, help="a folder of tasks (each with a task.toml)")
    e.add_argument(
        "--strategy",
        default="conductor,static,single:*",
        help="comma-separated: conductor, static, search(:*), cascade, pipeline, static+repair, "
        "single:NAME(@cause), single:*, SHAPE:A>B (architect, review, pipeline), shapes:* "
        "(default: %(default)s)",
    )
    e.add_argument("--jobs", type=int, default=1, help="tasks run at once (default: 1)")
    e.add_argument("--max-iterations", type=int, default=2, help="fix rounds per task")
    e.add_argument(
        "--order",
        choices=ORDERS,
        default="strategies",
        help="strategy by strategy (default), or task by task, the first strategy rotating: "
        "a run cut short still compares all of them on the same tasks",
    )
    e.add_argument(
        "--out", type=Path, default=None, help="results (JSONL; default: .conductor/eval/...)"
    )
    e.add_argument("--tasks", help="comma-separated task names to run (default: all)")
    e.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each task on Ray: a cluster's address (auto, ray://HOST:10001) or local",
    )
    e.add_argument(
        "--resume",
        action="store_true",
        help="keep the results --out already holds and run only the pairs it lacks",
    )
    e.set_defaults(func=lambda root, args, console: asyncio.run(run_eval(root, args, console)))


def _request(args: argparse.Namespace) -> TaskRequest:
    return TaskRequest(args.task, files=tuple(args.file))


def _config(root: Path, args: argparse.Namespace) -> Config:
    return load_config(root, args.config, _overrides(args))


def _plan(root: Path, args: argparse.Namespace, console: Console) -> int:
    request, config = _request(args), _config(root, args)

    async def plan() -> Any:
        async with Session(config) as session:
            return await plan_task(session, request)

    result = asyncio.run(plan())
    if args.json:
        print(json.dumps(as_data(result), indent=2))
    else:
        console.print(plan_table(result))
        for line in plan_notes(result):
            console.print(line, markup=False, highlight=False)
    return 0


@contextlib.contextmanager
def progress(console: Console) -> Iterator[Callable[[Event], None]]:
    """Event lines as they come; in a terminal also a live spinner with the latest one."""
    if not console.is_terminal:

        def say(line: str) -> None:
            console.print(line, markup=False, highlight=False)

        yield lambda e: say(describe_event(e))
        return
    with console.status("starting...") as status:

        def show(line: str) -> None:
            console.print(line, markup=False, highlight=False)
            status.update(Text(line))

        yield lambda e: show(describe_event(e))


def _run(root: Path, args: argparse.Namespace, console: Console) -> int:
    request = _request(args)
    config = _config(root, args)

    async def run() -> Any:
        async with Session(config) as session:
            if args.json:
                return await run_task(session, request)
            with progress(console) as on_event:
                return await run_task(session, request, Hooks(on_event=on_event))

    result = asyncio.run(run())
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0 if result.outcome is RunOutcome.DONE else 1
    console.print(plan_table(result.plan))
    for line in plan_notes(result.plan):
        console.print(line, markup=False, highlight=False)
    print_result(console, result)
    print_model_stats(console)
    if smoke_test_default(config):
        console.print(SMOKE_TEST_NOTE, style="bold", markup=False, highlight=False)
    return 0 if result.outcome is RunOutcome.DONE else 1


def _doctor(root: Path, args: argparse.Namespace, console: Console) -> int:
    print_doctor(console, _config(root, args), check=args.check)
    return 0


def _fix(root: Path, args: argparse.Namespace, console: Console) -> int:
    config = _config(root, args)
    review = terminal_reviewer(console) if args.review else None

    def printed(report: FixReport) -> None:
        print_fix_report(console, report)
        print_model_stats(console)

    async def again(report: FixReport) -> bool:
        question = "Try again with your reasons?"
        return review is not None and await asyncio.to_thread(_ask_yes, console, question)

    sinks: list[Callable[[Event], None]] = []

    @contextlib.asynccontextmanager
    async def attempt() -> AsyncIterator[None]:  # the spinner ends before a report prints
        with progress(console) as on_event:
            sinks.append(on_event)
            try:
                yield
            finally:
                sinks.pop()

    hooks = Hooks(
        on_event=lambda e: sinks[-1](e) if sinks else None,
        review=review,
        again=again,
        attempt=attempt,
        on_report=printed,
    )

    async def fix() -> FixReport:
        async with Session(config) as session:
            return await fix_repository(session, FixRequest(args.instruction or ""), hooks)

    return int(asyncio.run(fix()).exit_code)


def _ask_yes(console: Console, question: str) -> bool:
    try:
        return input(f"{question} [y/N] ").strip().lower().startswith("y")
    except EOFError:
        return False


def _mcp(root: Path, args: argparse.Namespace, console: Console) -> int:
    from ..mcp_server.app import serve

    serve(root)
    return 0


def _undo(root: Path, args: argparse.Namespace, console: Console) -> int:
    if args.list:
        points = checkpoints(root)
        for p in points:
            console.print(p.describe(), markup=False, highlight=False)
        if not points:
            console.print("no checkpoints")
        return 0
    done = undo(root, args.ref)
    restored = done.restored
    console.print(f"restored {restored.ref} ({restored.label})", markup=False, highlight=False)
    console.print(
        f"the state it replaced is saved as {done.saved.ref}", markup=False, highlight=False
    )
    return 0


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags as the last configuration layer, so they reach everything: the
    test command of ``fix --test`` is also what the tests tool worker runs."""
    if args.command != "fix":
        return {}
    return job_layer(args.test, args.max_iterations or None, args.budget_usd)


def _root(args: argparse.Namespace) -> Path:
    """The workspace: PATH, --root, or the current folder (always, for eval and train)."""
    if args.command in ("eval", "train"):
        return Path.cwd().resolve()
    root = (getattr(args, "path", None) or getattr(args, "root", None) or Path.cwd()).resolve()
    if not root.is_dir():
        raise ConductorError(f"workspace {root} is not a directory")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    console = Console(stderr=False, highlight=False)
    err = Console(stderr=True)
    try:
        if args.func is None:  # serve
            from ..server import serve

            serve(args.tcp, args.log_file)
            return 0
        root = _root(args)
        func: Handler = args.func
        return func(root, args, console)
    except ConductorError as e:
        err.print(f"conductor-lsp: error: {e}", markup=False, highlight=False)
        return 2
    except KeyboardInterrupt:
        err.print("conductor-lsp: interrupted")
        return 130


def entry() -> None:
    """The ``conductor-lsp`` command: ``main``, then out at once. With a model loaded, the
    interpreter's teardown of torch or llama.cpp takes seconds (1.6 s of a 9 s first job,
    measured) after everything was written, so the process leaves without it (not after
    Ray, whose exit handlers stop the processes it started)."""
    code = main()
    heavy = "torch" in sys.modules or "llama_cpp" in sys.modules
    if heavy and "ray" not in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)
