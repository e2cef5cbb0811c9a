"""How far two recordings of the same requests agree: verdicts, and answers where traces remain.

A replay takes each recorded verdict as a fact about its request. This script says how
much of that holds across recordings of the same tasks and strategies (``eval`` rows
with the same ``task`` and ``strategy``): how many verdicts differ, and, while the
runs' trace folders still exist, how many first answers differ.

    python bench/agreement.py --results runs/a.jsonl --results runs/b.jsonl --only single:
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from conductor_lsp.eval.run import TaskResult, read_results

Rows = dict[tuple[str, str], TaskResult]


def rows(path: Path, only: str) -> Rows:
    """The file's rows by (task, strategy), those whose strategy starts with ``only``."""
    return {
        (r.task, r.strategy): r
        for r in read_results(path.read_text())
        if r.strategy.startswith(only)
    }


def first_answer(row: TaskResult) -> str | None:
    """The first worker answer in the row's traces, or None when they are gone."""
    folder = Path(row.traces) if row.traces else None
    traces = sorted(folder.glob("*.jsonl")) if folder and folder.is_dir() else []
    if not traces:
        return None
    for line in traces[0].read_text().splitlines():
        event = json.loads(line)
        if event.get("type") == "response":
            return str(event.get("text", ""))
    return None


def compare(a: Rows, b: Rows) -> str:
    keys = sorted(set(a) & set(b))
    verdicts = [k for k in keys if a[k].solved != b[k].solved]
    answers = [(first_answer(a[k]), first_answer(b[k])) for k in keys]
    known = [(x, y) for x, y in answers if x is not None and y is not None]
    differ = sum(x != y for x, y in known)
    named = ", ".join(f"{t} {s}" for t, s in verdicts) or "none"
    return (
        f"{len(keys)} requests in common; verdicts differ on {len(verdicts)} ({named}); "
        f"answers differ on {differ} of the {len(known)} whose traces remain"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, action="append", required=True, help="2 or more")
    ap.add_argument("--only", default="", help="strategies starting with this (single:)")
    args = ap.parse_args()
    loaded = {p: rows(p, args.only) for p in args.results}
    for (pa, a), (pb, b) in itertools.combinations(loaded.items(), 2):
        print(f"{pa.name} vs {pb.name}: {compare(a, b)}")


if __name__ == "__main__":
    main()
