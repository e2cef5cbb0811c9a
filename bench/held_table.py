"""One held-out table from the raw rows of several live runs, search composed where it
did not run live.

Each ``--rows [LABEL:]STRATEGY=RUN[,RUN...]`` is one row of the table: the results of
those runs (``eval``/``bench/unseen.py`` output, one line per task and strategy) of that
strategy (``static``, ``cascade``, ``policy``, ``policy@cost``), the first per task.
``--compose-search RUN[,RUN...]``: search's row, its live rows where it ran and, on
the other tasks, the calls it makes composed from the episodes of every run given
(round one: the floor's call; when that was red, the cheapest worker's direct call and
the floor's worker in the second wording). Behind ``bench/serial_proxy.py --fresh`` the
same request gets the same answer, so another strategy's answer to search's request is
search's answer; a task whose answer is missing is named and left out of every row.

    python bench/held_table.py --suite DIR --tasks NAMES \\
        --rows "static=R/he-new-held-2026-12-07.jsonl,R/he-new-held-last28-2026-12-07.jsonl" \\
        --rows "policy with shapes:policy=R/he-new-held-shapes-2026-12-07.jsonl" \\
        --compose-search R/he-new-held-search-2026-12-07.jsonl \\
        --from R/he-new-held-2026-12-07.jsonl

(R: bench/results; ``--from`` is repeatable and takes every run whose answers may serve.)
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from _common import table
from hindsight import Answer, rows_of
from shape_table import Cell, Total, namer

from conductor_lsp.policy import Action


def results(spec: str) -> tuple[str, str, dict[str, dict]]:
    """[LABEL:]STRATEGY=RUN,... -> the label (the strategy without one), the strategy and
    its rows by task (the first kept)."""
    named, _, runs = spec.partition("=")
    label, _, strategy = named.rpartition(":")
    by_task: dict[str, dict] = {}
    for run in runs.split(","):
        for line in Path(run).read_text().splitlines():
            r = json.loads(line)
            if r["strategy"] == strategy:
                by_task.setdefault(r["task"], r)
    return label or strategy, strategy, by_task


#: Search's round one on one task: green or not, its $ and its calls.
Searched = tuple[bool, float, int]


def composed(runs: list[Path], suite: Path, tasks: list[str]) -> dict[str, Searched]:
    """Search's round one per task, from the runs' recorded answers (a brief is its
    task's as ``bench/shape_table.py`` names it)."""
    rows, floor, cheap = rows_of(runs)
    task_of = namer("", suite)
    out = {}
    for brief, row in rows.items():
        task = task_of(brief)
        made = searched(row, floor, cheap) if task in tasks else None
        if task and made:
            out[task] = made
    return out


def searched(row: Mapping[Action, Answer], floor: Action, cheap: Action) -> Searched | None:
    """What search pays and wins in round one on these answers: the floor's call; when
    red, the cheapest worker directly and the floor's worker in the second wording (None:
    one of those has no answer)."""
    if floor not in row:
        return None
    green, cost = row[floor]
    if green:
        return True, cost, 1
    rest = [row.get(cheap), row.get(Action(floor.worker, "cause"))]
    if None in rest:
        return None
    answers = [a for a in rest if a is not None]
    return any(g for g, _ in answers), cost + sum(c for _, c in answers), 1 + len(answers)


def search_rows(args: argparse.Namespace, tasks: list[str]) -> dict[str, dict]:
    """Search's live rows, composed ones where it did not run; and how often a composed
    row is the live one where both exist (the claim composing rests on)."""
    *_, live = results("search=" + args.compose_search)
    made = composed([Path(r) for s in args.sources for r in s.split(",")], args.suite, tasks)
    both = [t for t in tasks if t in live and t in made]
    same = [t for t in both if _same(live[t], made[t])]
    print(f"search composed as it ran live on {len(same)} of {len(both)} tasks where both exist"
          + "".join(f"; not on {t}" for t in both if t not in same))  # fmt: skip
    return {t: live.get(t) or _row(made[t]) for t in tasks if t in live or t in made}


def _same(row: dict, made: Searched) -> bool:
    green, cost, calls = made
    return (row["solved"], row["worker_calls"]) == (green, calls) and abs(row["cost"] - cost) < 1e-9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", type=Path, help="the suite's folder (--compose-search)")
    ap.add_argument("--tasks", type=Path, required=True, help="task names, one per line")
    ap.add_argument("--rows", action="append", default=[], help="[LABEL:]STRATEGY=RUN,...")
    ap.add_argument("--compose-search", help="search's live runs, RUN,...")
    ap.add_argument(
        "--from", dest="sources", action="append", default=[], help="runs to compose from"
    )
    args = ap.parse_args()
    if args.compose_search and args.suite is None:
        ap.error("--compose-search needs --suite (a brief is matched to its task's code)")
    tasks = args.tasks.read_text().split()
    read = [results(s) for s in args.rows]
    labelled = {label: rows for label, _, rows in read}
    if args.compose_search:
        labelled["search"] = search_rows(args, tasks)
    missing = sorted({t for rows in labelled.values() for t in tasks if t not in rows})
    kept = [t for t in tasks if t not in missing]
    totals = {label: Total() for label in labelled}
    live = {k: sum(not rows[t].get("composed") for t in kept) for k, rows in labelled.items()}
    for label, rows in labelled.items():
        for r in (rows[t] for t in kept):
            cell = Cell(r["solved"], r["cost"], r["worker_calls"], r["tokens"], r["seconds"])
            totals[label].add(cell)
    first = {strategy: totals[label] for label, strategy, _ in reversed(read)}
    static, cascade = (first.get(name, Total()).cost for name in ("static", "cascade"))
    print(table(
        [f"{len(kept)} held-out tasks", "solved", "$", "vs static", "vs cascade", "calls",
         "tokens", "seconds", "live"],
        [[k, f"{v.solved}/{len(kept)}", f"{v.cost:.4f}", _x(v.cost, static), _x(v.cost, cascade),
          v.calls, f"{v.tokens:,}", round(v.seconds), live[k]] for k, v in totals.items()],
    ))  # fmt: skip
    if missing:
        print("left out (a row or an answer missing): " + ", ".join(missing))


def _row(made: Searched) -> dict:
    green, cost, calls = made
    return {"solved": green, "cost": cost, "worker_calls": calls, "tokens": 0, "seconds": 0.0,
            "composed": True}  # fmt: skip


def _x(cost: float, base: float) -> str:
    return f"{cost / base:.2f}x" if base else ""


if __name__ == "__main__":
    main()
