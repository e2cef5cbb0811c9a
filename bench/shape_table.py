"""Shapes replayed from one ``eval`` run's table, each task left out in turn.

An ``eval --max-iterations 1`` run of ``single:*`` (or ``static`` for the strongest)
and ``architect:*`` records, per task, what each action did in one round: green or
not, its $, calls, tokens and seconds. This script replays the strategies built from
those actions on the same answers: the trivial cascade (the cheapest worker alone,
then the floor), and the routing policy with the project's own fit, choice and wave
order (``fit``, ``Policy.choose``, ``order.waves``; the floor lane beside it), fitted
on every other task's verdicts (leave one out): once on single calls alone, once with
the architect and review shapes too. The policy chooses among the recorded actions
only (a replay can pay only for answers it holds). A policy's picks are paid as the
waves run them: a wave only when every answer before it was red.

    python bench/shape_table.py --results runs/next11.jsonl --out bench/results/x.jsonl

``--folds 2`` fits on half the tasks and replays the other half (``tasks[k::2]``, as
``bench/two_fold.py`` splits), then the other way round; ``--suite DIR`` names a task
by the folder of ``DIR`` whose instruction the brief opens with, else by the folder
that holds the brief's test file (``bench/tasks``; the HumanEval-fix sample, where
every test file is ``test_solution.py``), not by ``--prefix``. With ``--results``
given more than once, a later file's rows replace an earlier one's for the same task
and action (a re-recording of some tasks read after the whole run).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import folds, table
from hindsight import LEAST, MOST, ends, hindsight, named

from conductor_lsp.conductor.shapes import read_shape
from conductor_lsp.conductor.static import DIRECT, pipeline_plan
from conductor_lsp.episodes.log import read_episodes
from conductor_lsp.eval import SuiteTask, load_suite
from conductor_lsp.eval.run import read_results
from conductor_lsp.plan import Lane, Step
from conductor_lsp.policy import Action, Example, Option, Policy, eval_episodes, fit, waves
from conductor_lsp.policy.plans import chain
from conductor_lsp.protocols import WorkerInfo

#: A brief names its failing test file: the task it is (QuixBugs: test_NAME.py -> quix_NAME).
TASK_OF = re.compile(r"test_(\w+)\.py")


@dataclass
class Cell:
    green: bool
    cost: float
    calls: int
    tokens: int
    seconds: float


def action_of(strategy: str, pool: Sequence[WorkerInfo]) -> Action | None:
    if strategy == "static":
        return ends(pool)[0]
    kind, _, who = strategy.partition(":")
    if kind == "single":
        worker, _, wording = who.partition("@")  # single:NAME@cause: the second wording
        return Action(worker, wording or "direct")
    if kind in ("architect", "review", "pipeline") and who:
        helper, _, worker = who.partition(">")
        return Action(worker, "direct", kind, helper)
    return None


def examples(brief: str, row: dict[Action, Cell], pool: Sequence[WorkerInfo]) -> list[Example]:
    """A task's verdicts as the policy learns them: a review's only when its first call
    was red (what the review itself did, and cost), as the fix loop records it."""
    out = []
    for a, c in row.items():
        if a.shape != "review":
            out.append(Example(brief, pool, a, c.green, c.cost, c.seconds))
            continue
        first = row.get(Action(a.helper, a.wording))
        if first is not None and not first.green:
            out.append(Example(brief, pool, a, c.green, c.cost - first.cost, c.seconds))
    return out


#: Per task, the named ``pipeline`` strategy's row and the floor's call in the same run
#: (None: that run holds no static row).
Behind = dict[str, tuple[Cell, "Cell | None"]]


def read(
    results: Path, name: Callable[[str], str | None], known: Sequence[WorkerInfo] = ()
) -> tuple[dict[str, dict[Action, Cell]], dict[str, str], list[WorkerInfo], Behind]:
    """Per task, each action's cell; each task's first brief (``name``: the task of a
    brief, ``None`` when it names none); the pool; per task, the named ``pipeline``
    strategy's row (the floor's call, then the chain when that was red). A run whose
    episodes were not kept (eval before 2026-12-07 lost them with a relative ``--out``)
    gives cells only: its briefs and pool come from the other files (``known``: their
    pool, which names its static rows' action)."""
    found = eval_episodes(results)
    episodes = read_episodes(found) if found.exists() else []
    pool = list(episodes[0].workers) if episodes else list(known)
    briefs: dict[str, str] = {}
    for e in episodes:
        task = name(e.task)
        if task and e.round == 1:
            briefs.setdefault(task, e.task)
    cells: dict[str, dict[Action, Cell]] = {}
    piped: dict[str, Cell] = {}
    for r in read_results(results.read_text()):
        cell = Cell(r.solved, r.cost, r.worker_calls, r.tokens, r.seconds)
        a = action_of(r.strategy, pool)
        if a is not None:
            cells.setdefault(r.task, {})[a] = cell
        elif r.strategy == "pipeline":
            piped[r.task] = cell
    floor = ends(pool)[0] if pool else None
    behind = {t: (c, cells.get(t, {}).get(floor) if floor else None) for t, c in piped.items()}
    return cells, briefs, pool, behind


def unfloored(
    cells: dict[str, dict[Action, Cell]], behind: Behind, pool: Sequence[WorkerInfo]
) -> None:
    """The pipeline chain's own cells, from the named strategy's rows where the floor's
    call was red (its row less that call, the same run's where it holds one: one
    request, one answer behind ``serial_proxy.py --fresh``); where the floor was green
    the chain never ran."""
    if not behind or not pool:
        return
    floor = ends(pool)[0]
    shape = read_shape(pipeline_plan(pool, 3).steps)
    chain = Action(shape.worker, "direct", shape.name, shape.helper)
    for t, (row, own) in behind.items():
        first = own or cells.get(t, {}).get(floor)
        if first is None or first.green or row.calls <= first.calls:
            continue
        own = Cell(row.green, row.cost - first.cost, row.calls - first.calls,
                   row.tokens - first.tokens, row.seconds - first.seconds)  # fmt: skip
        cells[t].setdefault(chain, own)


def behind_floor(cells: dict[str, dict[Action, Cell]], pool: Sequence[WorkerInfo]) -> set[Action]:
    """The actions recorded only where the floor's call was red: every task without one
    has the floor's green answer (a round runs them after the floor, if at all)."""
    if not pool:
        return set()
    floor = ends(pool)[0]
    every = {a for row in cells.values() for a in row}
    return {
        a
        for a in every - {floor}
        if any(a not in row for row in cells.values())
        and all(a in row or (floor in row and row[floor].green) for row in cells.values())
    }


def replay(
    policy: Policy, brief: str, row: dict[Action, Cell], pool: Sequence[WorkerInfo], prefer: str
) -> tuple[Cell, list[str]]:
    """What the fix loop pays with this policy and the floor beside it, on this row (a
    review's cell is its first call and, when that was red, the review: the round runs it
    so; a review of the floor's own call rides on the floor)."""
    floor, _ = ends(pool)
    chose = [a for a, _, _ in policy.choose(brief, pool, 3, prefer=prefer)]
    picks = [a for a in chose if a in row]
    firsts = {Action(a.helper, a.wording) for a in picks if a.shape == "review"}
    if floor in firsts:
        floor = next(a for a in picks if a.shape == "review" and a.helper == floor.worker)
    picks = [a for a in picks if a not in firsts and a != floor]
    opts = [_option(Lane.PLAN, a, row, policy, brief, pool) for a in picks]
    opts.append(_option(Lane.FLOOR, floor, row, policy, brief, pool))
    out, ran = Cell(False, 0.0, 0, 0, 0.0), []
    for wave in waves(opts, prefer):
        for o in wave:
            a = _ACTIONS[id(o)]
            ran.append(named(a))
            out = _sum(out, row[a])
        if out.green:
            break
    return out, ran + [f"{named(a)} (no answer recorded)" for a in chose if a not in row]


#: Each option's action (an option names its first call only, for a review).
_ACTIONS: dict[int, Action] = {}


def _option(
    lane: Lane,
    a: Action,
    row: dict[Action, Cell],
    p: Policy,
    brief: str,
    pool: Sequence[WorkerInfo],
) -> Option:
    steps = chain(p, a).steps if a.shape in ("architect", "pipeline") else ()
    call = Step(a.helper if a.shape == "review" else a.worker, p.wordings.get(a.wording, DIRECT))
    o = Option(lane, steps[-1] if steps else call, row[a].cost, p.figures(brief, a, pool, 1000)[0],
               steps[:-1])  # fmt: skip
    _ACTIONS[id(o)] = a
    return o


@dataclass
class Total:
    solved: int = 0
    cost: float = 0.0
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    #: The tasks counted.
    n: int = 0

    def add(self, c: Cell) -> None:
        self.n += 1
        self.solved += c.green
        self.cost += c.cost
        self.calls += c.calls
        self.tokens += c.tokens
        self.seconds += c.seconds


def namer(prefix: str, suite: Path | None) -> Callable[[str], str | None]:
    """A brief -> its task: with ``suite``, the folder whose instruction the brief's task
    opens with (the longest such; of folders with the same instruction, as two
    HumanEval-fix problems have, the one whose files the brief lists at their sizes),
    else the folder holding its ``test_NAME.py``; without, ``prefix + NAME``."""
    tests = suite.glob("*/test_*.py") if suite else ()
    folders = {f.stem.removeprefix("test_"): f.parent.name for f in tests}

    def by_test(brief: str) -> str | None:
        m = TASK_OF.search(brief)
        return None if m is None else folders.get(m.group(1), prefix + m.group(1))

    if suite is None:
        return by_test
    tasks = load_suite(suite)

    def by_instruction(brief: str) -> str | None:
        opens = [t for t in tasks if brief.startswith(f"## Task\n{t.instruction}\n")]
        if not opens:
            return by_test(brief)
        longest = max(len(t.instruction) for t in opens)
        tied = [t for t in opens if len(t.instruction) == longest]
        if len(tied) == 1:  # the files are read only where an instruction is shared
            return tied[0].name
        return max(tied, key=lambda t: (_listed(brief, t), t.name)).name

    return by_instruction


def _listed(brief: str, task: SuiteTask) -> int:
    """How many of the task's files the brief lists at their sizes (its ``## Files``)."""
    lines = {f: len((task.path / f).read_text(errors="replace").splitlines()) for f in task.files()}
    return sum(f"`{f}` ({n} lines" in brief for f, n in lines.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, action="append", required=True, help="repeatable")
    ap.add_argument("--prefix", default="quix_", help="task name = prefix + the test file's name")
    ap.add_argument(
        "--suite",
        type=Path,
        help="name tasks by the suite folder whose instruction or test the brief holds",
    )
    ap.add_argument("--folds", type=int, default=0, help="0: leave one out (default)")
    ap.add_argument("--out", type=Path, help="raw rows (JSONL)")
    args = ap.parse_args()
    cells, briefs, pool, partial = gather(args.results, namer(args.prefix, args.suite))
    every = {a for row in cells.values() for a in row}
    tasks = whole(cells, briefs, partial)
    totals = recorded({t: cells[t] for t in tasks}, pool, partial)
    rows = []
    for held, train in folds(tasks, args.folds):
        for label, shapes in (("policy, single calls", False), ("policy, with shapes", True)):
            policy = fitted(train, cells, briefs, pool, shapes=shapes)
            known = in_order(policy, pool, [a for a in every if shapes or a.solo])
            policy.actions = _offering(known)  # type: ignore[method-assign,assignment]
            for t, prefer in itertools.product(held, ("balanced", "cost")):
                got, ran = replay(policy, briefs[t], cells[t], pool, prefer)
                name = f"{label} ({prefer})"
                totals.setdefault(name, Total()).add(got)
                rows.append({"task": t, "strategy": name, "ran": ran, "green": got.green,
                             "cost": got.cost, "calls": got.calls})  # fmt: skip
    report(totals, len(tasks), ends(pool)[0])
    print(won_by_shapes({t: cells[t] for t in tasks}))
    print(chosen(rows))
    for r in rows:
        print(json.dumps(r))
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))


def gather(
    results: Sequence[Path], name: Callable[[str], str | None]
) -> tuple[dict[str, dict[Action, Cell]], dict[str, str], list[WorkerInfo], set[Action]]:
    """``read`` over several runs of one suite: a later file's cell replaces an earlier
    one's for the same task and action; the actions recorded only behind a red floor
    (the named ``pipeline`` strategy's chain, ``unfloored``; an action recorded on
    those tasks alone)."""
    cells: dict[str, dict[Action, Cell]] = {}
    briefs: dict[str, str] = {}
    behind: Behind = {}
    kept = [p for p in results if eval_episodes(p).exists()]
    pool = read(kept[0], name)[2] if kept else []  # a run without episodes is read with it
    for path in results:
        more, named, workers, piped = read(path, name, pool)
        pool = workers or pool
        briefs.update(named)
        behind.update(piped)
        for t, row in more.items():
            cells.setdefault(t, {}).update(row)
    unfloored(cells, behind, pool)
    return cells, briefs, pool, behind_floor(cells, pool)


def whole(
    cells: dict[str, dict[Action, Cell]], briefs: dict[str, str], partial: Set[Action] = frozenset()
) -> list[str]:
    """The tasks with a brief and a cell for every action any task has (whole rows), but
    the ``partial`` ones (recorded on some tasks only)."""
    every = {a for row in cells.values() for a in row} - partial
    return sorted(t for t in cells if t in briefs and every <= set(cells[t]))


def fitted(
    train: Sequence[str],
    cells: dict[str, dict[Action, Cell]],
    briefs: dict[str, str],
    pool: Sequence[WorkerInfo],
    *,
    shapes: bool,
) -> Policy:
    """The policy a replay fits on ``train``'s verdicts (single calls alone unless
    ``shapes``), each verdict counted twice, as every replay in bench/README.md was fitted
    (since 46f5d42); ``bench/unseen.py --fit-table`` fits the same one to run it live."""
    policy = Policy()  # both first-call wordings, as the product's policy has
    ex = [e for u in train for e in examples(briefs[u], cells[u], pool)
          if shapes or e.action.solo]  # fmt: skip
    fit(policy, ex * 2)
    return policy


def in_order(policy: Policy, pool: Sequence[WorkerInfo], held: list[Action]) -> list[Action]:
    """The actions the table holds answers for, in the order the product's policy offers
    them (``Policy.actions``), the rest by name: ``choose`` breaks an exact tie (two
    wordings of one worker, the same base rate and bill) by that order, and a set's
    order (the hash seed's) made the replay differ between runs of the same files."""
    offered = [a for a in policy.actions(pool) if a in held]
    return offered + sorted((a for a in held if a not in offered), key=named)


def _offering(known: list[Action]) -> Callable[[Sequence[WorkerInfo]], list[Action]]:
    """The policy's actions: the ones the table holds answers for."""
    return lambda _pool: known


def recorded(
    cells: dict[str, dict[Action, Cell]],
    pool: Sequence[WorkerInfo],
    partial: Set[Action] = frozenset(),
) -> dict[str, Total]:
    """Each recorded action's totals (a ``partial`` one's over the tasks it ran on: the
    floor's red ones), the trivial cascade's (the cheapest worker, then the floor's call
    when it was red), and the bound of routing them with hindsight, the floor kept
    (``hindsight``: the least any router never worse than static pays)."""
    floor, cheap = ends(pool)
    totals: dict[str, Total] = {}
    for row in cells.values():
        for a, c in row.items():
            label = f"{named(a)} alone" if a.solo else named(a)
            label += " (where the floor was red)" if a in partial else ""
            totals.setdefault(label, Total()).add(c)
        small = row.get(cheap)
        if small is not None and floor in row:
            cascade = small if small.green else _sum(small, row[floor])
            totals.setdefault("cascade (cheapest, then the floor)", Total()).add(cascade)
        answers = {a: (c.green, c.cost) for a, c in row.items()}
        for name, after in ((LEAST, False), (MOST, True)):
            routed = hindsight(answers, floor, after=after)
            if routed is not None:
                green, cost, paid = routed
                got = functools.reduce(_sum, (row[a] for a in paid))
                totals.setdefault(name, Total()).add(
                    dataclasses.replace(got, green=green, cost=cost)
                )
    return totals


def report(totals: dict[str, Total], n: int, floor: Action) -> None:
    """The table; a row over some of the tasks only is not compared with the others."""
    static = totals.get(f"{floor.worker} alone")
    cascade = totals.get("cascade (cheapest, then the floor)")
    print(table(
        ["strategy", "solved", "$", "vs static", "vs cascade", "calls", "tokens", "seconds"],
        [[name, f"{c.solved}/{c.n or n}", f"{c.cost:.4f}", *(_times(c, b) if c.n in (0, n)
          else "" for b in (static, cascade)), c.calls, c.tokens, round(c.seconds)]
         for name, c in totals.items()],
    ))  # fmt: skip


def _times(c: Total, base: Total | None) -> str:
    return f"{c.cost / base.cost:.2f}x" if base and base.cost else ""


def won_by_shapes(cells: dict[str, dict[Action, Cell]]) -> str:
    """The tasks some shape solved and no single call did: what only a split bought."""
    found = []
    for t, row in sorted(cells.items()):
        if not any(c.green for a, c in row.items() if a.solo):
            won = sorted(named(a) for a, c in row.items() if c.green and not a.solo)
            found += [f"{t} ({', '.join(won)})"] if won else []
    return "won by a shape, by no single call: " + ("; ".join(found) or "none")


def chosen(rows: list[dict[str, Any]]) -> str:
    """What each policy ran: how often each action ran, over the held-out tasks."""
    out = []
    for name in dict.fromkeys(r["strategy"] for r in rows):
        ran = Counter(a for r in rows if r["strategy"] == name for a in r["ran"])
        out.append(f"{name} ran: " + ", ".join(f"{a} x{k}" for a, k in ran.most_common()))
    return "\n".join(out)


def _sum(a: Cell, b: Cell) -> Cell:
    return Cell(a.green or b.green, a.cost + b.cost, a.calls + b.calls, a.tokens + b.tokens,
                a.seconds + b.seconds)  # fmt: skip


if __name__ == "__main__":
    main()
