"""What routing could save at best: each task's recorded answers routed with hindsight,
the floor kept (the bound any router that is never worse than static pays at least).

Per task, from the answers a run recorded for it: when some action cheaper than the
floor's call (the strongest worker, asked directly) was green, the cheapest of those
alone (cost mode runs such calls before the floor's, which is then not paid); else the
floor's call, and (the second row) when it was red too, the cheapest green action after
it. No router
that keeps the floor solves more of these answers for less: on a task the cheaper
calls all miss, the floor's call is paid, whatever it says. Compare its $ with the
trivial cascade's: the gap is all that choosing among these actions can earn.

    python bench/hindsight.py --run bench/results/he-new-held-2026-12-07.jsonl \\
        --run bench/results/he-new-held-cost-first20-2026-12-07.jsonl

``--run`` (repeatable) reads a run's episodes (``RUN-traces-episodes.jsonl``), round one
only; an action answered in several runs keeps its first answer (the same request got
the same answer behind ``bench/serial_proxy.py --fresh``). ``bench/shape_table.py``
prints the same bound for a table where every action answered every task.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from _common import episodes_of, table

from conductor_lsp.conductor.static import strongest
from conductor_lsp.policy import Action, Policy, examples_from
from conductor_lsp.protocols import WorkerInfo

#: One answer: green or not, and its $ (a review's: its first call's too).
Answer = tuple[bool, float]
#: Routed with hindsight: green or not, its $, and the actions paid.
Routed = tuple[bool, float, tuple[Action, ...]]
CASCADE = "the trivial cascade"
#: The rows of the bound: nothing after a red floor, then the likeliest call after it.
LEAST = "hindsight, the floor kept, nothing after it"
MOST = "hindsight, the floor kept, one green call after it"


def hindsight(row: Mapping[Action, Answer], floor: Action, *, after: bool = True) -> Routed | None:
    """The least $ for the most solved on ``row`` with the floor kept, and the actions
    that pay it (None: the floor's call has no answer in it); ``after=False``: nothing
    after a red floor (the least $ for at least the cheaper calls' and static's solved)."""
    if floor not in row:
        return None
    floor_green, floor_cost = row[floor]
    cheaper = [(c, a) for a, (g, c) in row.items() if a != floor and g and c < floor_cost]
    if cheaper:
        cost, a = min(cheaper, key=lambda t: t[0])
        return True, cost, (a,)
    if floor_green or not after:
        return floor_green, floor_cost, (floor,)
    then = [(_after(a, c, floor, floor_cost), a) for a, (g, c) in row.items() if g and a != floor]
    if not then:
        return False, floor_cost, (floor,)
    extra, a = min(then, key=lambda t: t[0])
    return True, floor_cost + extra, (a,) if _rides(a, floor) else (floor, a)


def _after(a: Action, cost: float, floor: Action, floor_cost: float) -> float:
    """What ``a`` adds once the floor's call was paid: a review of that very answer rides
    on it (its $ holds the floor's call)."""
    return max(cost - floor_cost, 0.0) if _rides(a, floor) else cost


def _rides(a: Action, floor: Action) -> bool:
    return a.shape == "review" and Action(a.helper, a.wording) == floor


def ends(pool: Sequence[WorkerInfo]) -> tuple[Action, Action]:
    """The floor's call (the strongest worker, asked directly) and the cheapest worker's
    direct call: the two ends of the trivial cascade."""
    models = [w for w in pool if not w.is_tool]
    cheap = min(models, key=lambda w: w.price_in + w.price_out)
    return Action(strongest(models).name, "direct"), Action(cheap.name, "direct")


def named(a: Action) -> str:
    """An action as the tables name it: ``small``, ``big@cause``, ``review big>small``."""
    if a.solo:
        return a.worker + ("" if a.wording == "direct" else f"@{a.wording}")
    return f"{a.shape} {a.helper}>{a.worker}"


def cascade(row: Mapping[Action, Answer], floor: Action, cheap: Action) -> Answer | None:
    """The trivial cascade on the same answers: the cheapest worker, then the floor."""
    if floor not in row or cheap not in row:
        return None
    g, c = row[cheap]
    return (True, c) if g else (row[floor][0], c + row[floor][1])


def rows_of(runs: Sequence[Path]) -> tuple[dict[str, dict[Action, Answer]], Action, Action]:
    """Per brief, each action's first round-one answer (a review's $ with its first
    call's, as in ``bench/shape_table.py``'s cells); the floor's and the cheapest
    worker's direct actions."""
    episodes = [e for e in episodes_of(runs) if e.round == 1]
    if not episodes:
        raise SystemExit("no round-one episodes in the runs given")
    floor, cheap = ends(episodes[0].workers)
    rows: dict[str, dict[Action, Answer]] = {}
    for ex in examples_from(episodes, Policy()):
        rows.setdefault(ex.brief, {}).setdefault(ex.action, (ex.green, ex.cost))
    for row in rows.values():  # a review's episode bills the review alone: add its first call
        for a, (green, cost) in list(row.items()):
            first = row.get(Action(a.helper, a.wording)) if a.shape == "review" else None
            if first is not None:
                row[a] = (green, cost + first[1])
    return rows, floor, cheap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, action="append", required=True, help="repeatable")
    args = ap.parse_args()
    rows, floor, cheap = rows_of(args.run)
    totals: dict[str, list[float]] = {}
    for row in rows.values():
        both = cascade(row, floor, cheap)
        bound, most = hindsight(row, floor, after=False), hindsight(row, floor)
        if both is None or bound is None or most is None:
            continue
        for name, (g, c) in ((CASCADE, both), (LEAST, bound[:2]), (MOST, most[:2])):
            got = totals.setdefault(name, [0, 0.0, 0])
            got[0], got[1], got[2] = got[0] + g, got[1] + c, got[2] + 1
    base = totals.get(CASCADE, [0, 0.0, 0])[1]
    print(table(
        ["on the recorded answers", "solved", "$", "vs cascade"],
        [[k, f"{v[0]}/{v[2]}", f"{v[1]:.4f}", f"{v[1] / base:.2f}x" if base else ""]
         for k, v in totals.items()],
    ))  # fmt: skip
    answered = Counter(named(a) for r in rows.values() for a in r)
    print(
        f"{len(rows)} briefs; answers: " + ", ".join(f"{a} {k}" for a, k in answered.most_common())
    )


if __name__ == "__main__":
    main()
