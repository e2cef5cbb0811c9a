"""A suite none of the policy's data came from: one policy fitted on other suites'
recorded runs (``--fit-from``, repeatable), then every strategy on every task, live, in
the given order, side by side and priced (the comparison of ``bench/two_fold.py``
without folds: nothing of this suite was seen). ``--online``: the policy rows learn from
each job as they go, as a user's policy does with ``[learn] online = true``.
``--by-task``: every strategy on one task before the next, into one file that a second
call resumes (``OUT/runs/by-task.jsonl``): a run cut short still compares every strategy
on the same tasks. ``--fit-table SUITE=RUN[,RUN...]`` (repeatable, instead of
``--fit-from``): the policy ``bench/shape_table.py`` fits on those runs' tables of one
round (every task of every table; single calls alone with ``--single``), so the policy
whose replays are measured in-suite is the one run held out; the runs need no episodes
of their own where another run of the same suite has them.

    python bench/unseen.py --suite /tmp/quixbugs --config bench/configs/local_pair.toml \\
        --fit-from bench/results/tasks-record-2026-12-03.jsonl \\
        --fit-from bench/results/he-record-2026-12-03.jsonl \\
        --strategy static,cascade,policy@cost,policy,search --out /tmp/unseen
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
from pathlib import Path
from typing import Any

import shape_table
from _common import episodes_of
from two_fold import chosen, fitted, fold, report, save

from conductor_lsp import load_config
from conductor_lsp.configure.load import layered
from conductor_lsp.eval import load_suite


async def main_async(args: argparse.Namespace) -> None:
    tasks = load_suite(Path(args.suite))
    if args.tasks:
        wanted = args.tasks.split(",")
        tasks = sorted((t for t in tasks if t.name in wanted), key=lambda t: wanted.index(t.name))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    policy = out / "policy.json"
    if args.fit_table:
        notes = [f"policy fitted on {tabled(args.fit_table, policy, shapes=not args.single)}"]
    else:
        episodes = episodes_of(args.fit_from)
        notes = [f"policy fitted on {fitted(episodes, None, policy)} of the other suites"]
    base = load_config(Path.cwd(), Path(args.config))
    layers = chosen(args.strategy, base.workers, policy)
    if args.online:  # each policy row learns from its own jobs, on its own copy
        resumed = args.by_task and (out / "runs" / "by-task.jsonl").exists()
        layers = {name: online(name, layer, policy, out, resumed) for name, layer in layers.items()}
    rows = await fold(args, base, tasks, layers, out / "runs", by_task=args.by_task)
    report(rows, notes)
    save(rows, out)


def tabled(specs: list[str], path: Path, *, shapes: bool) -> str:
    """The replays' fit on every whole task of each ``SUITE=RUN,RUN`` table, saved at
    ``path``; returns what it was fitted on."""
    cells: dict[str, Any] = {}
    briefs: dict[str, str] = {}
    pools = []
    for spec in specs:
        suite, sep, runs = spec.partition("=")
        if not sep or not runs:
            raise SystemExit(f"--fit-table {spec!r}: expected SUITE=RUN[,RUN...]")
        files = [Path(r) for r in runs.split(",")]
        more, named, pool, partial = shape_table.gather(files, shape_table.namer("", Path(suite)))
        for t in shape_table.whole(more, named, partial):  # a suite's tasks, kept apart by its name
            cells[f"{suite}:{t}"], briefs[f"{suite}:{t}"] = more[t], named[t]
        pools.append(pool)
    if any([w.name for w in p] != [w.name for w in pools[0]] for p in pools):
        raise SystemExit("--fit-table: the tables' pools differ; fit on one pool's runs")
    policy = shape_table.fitted(list(cells), cells, briefs, pools[0], shapes=shapes)
    policy.save(path)
    kinds = "every action" if shapes else "single calls"
    return f"{len(cells)} tasks of {len(specs)} suites' tables ({kinds}), trust {policy.trust:g}"


def online(
    name: str, layer: dict[str, Any], policy: Path, out: Path, resumed: bool = False
) -> dict[str, Any]:
    """A policy row with ``[learn] online = true`` on a copy of the fitted policy; a
    resumed ``--by-task`` run goes on learning from the copy its first call left."""
    if layer.get("conductor", {}).get("policy") is None:
        return layer
    mine = out / f"{name}.policy.json"
    if not (resumed and mine.exists()):
        shutil.copy(policy, mine)
    led = {"conductor": {"policy": str(mine.resolve())}, "learn": {"online": True}}
    return layered(layer, led)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--config", required=True)
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--fit-from", action="append", help="another suite's recorded eval run")
    source.add_argument("--fit-table", action="append",
                        help="SUITE=RUN[,RUN...]: fit as bench/shape_table.py does")  # fmt: skip
    ap.add_argument("--single", action="store_true", help="--fit-table: single calls alone")
    ap.add_argument("--strategy", default="static,search,cascade,policy,policy@cost")
    ap.add_argument("--tasks", help="comma-separated task names, in the order run")
    ap.add_argument("--rounds", type=int, default=2, help="max_iterations")
    ap.add_argument("--out", default="/tmp/unseen")
    ap.add_argument("--online", action="store_true",
                    help="the policy rows learn from each job ([learn] online = true)")  # fmt: skip
    ap.add_argument("--by-task", action="store_true",
                    help="each task under every strategy, then the next; resumable")  # fmt: skip
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
