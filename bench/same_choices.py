"""Whether two fits choose alike on recorded briefs: the policy ``bench/unseen.py
--fit-table`` fits from one set of tables (``--a``) and from another (``--b``, say with
one more strategy's rows), each asked its first round's set (``Policy.choose``, both
modes) on every round-one brief of the given episodes. Where the sets are the same on
every brief, a live run of the first fit is the second's too (the same requests: one
request, one answer behind ``bench/serial_proxy.py --fresh``), so adding data need not
be measured live to be measured. It prints the briefs whose sets differ, and what the
second fit expects of each shape only it offers.

    python bench/same_choices.py --a /tmp/HE=bench/results/he-shapes-2026-12-06.jsonl \\
        --b /tmp/HE=bench/results/he-fresh-baselines-2026-12-07.jsonl,... \\
        --briefs bench/results/he-new-held-shapes-2026-12-07-traces-episodes.jsonl
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hindsight import named
from unseen import tabled

from conductor_lsp.episodes.log import read_episodes
from conductor_lsp.policy import Action, Policy
from conductor_lsp.protocols import WorkerInfo

MODES = ("balanced", "cost")


def fitted(specs: list[str], folder: Path, name: str) -> tuple[Policy, str]:
    """The policy ``unseen.py --fit-table`` fits (every action), and what it saw."""
    path = folder / f"{name}.policy.json"
    said = tabled(specs, path, shapes=True)
    return Policy.load(path), said


def briefs_of(runs: Sequence[Path]) -> dict[str, list[WorkerInfo]]:
    """Each round-one brief the episodes hold, with its pool, in the order first seen."""
    out: dict[str, list[WorkerInfo]] = {}
    for run in runs:
        for e in read_episodes(run):
            if e.round == 1:
                out.setdefault(e.task, list(e.workers))
    return out


def differences(
    a: Policy, b: Policy, briefs: dict[str, list[WorkerInfo]]
) -> list[tuple[str, str, list[Action], list[Action]]]:
    """(mode, brief's head, a's set, b's set) wherever the two sets differ."""
    out = []
    for brief, pool in briefs.items():
        for mode in MODES:
            mine = [x for x, _, _ in a.choose(brief, pool, 3, prefer=mode)]
            theirs = [x for x, _, _ in b.choose(brief, pool, 3, prefer=mode)]
            if mine != theirs:
                out.append((mode, brief[:60].replace("\n", " "), mine, theirs))
    return out


def offered(a: Policy, b: Policy, briefs: dict[str, list[WorkerInfo]]) -> list[str]:
    """What the second fit expects, over the briefs, of each action of a shape the first
    does not offer: its least and greatest chance, its $."""
    new = [s for s in b.shapes() if s not in a.shapes()]
    seen: dict[Action, list[tuple[float, float]]] = {}
    for brief, pool in briefs.items():
        for x, p, c in b.rank(brief, pool):
            if x.shape in new:
                seen.setdefault(x, []).append((p, c))
    out = []
    for x, v in seen.items():
        bill = b.bills.get(x.bill_key)
        billed = f"billed {bill.answers:g} answers" if bill and bill.answers else "never billed"
        lo, hi = min(p for p, _ in v), max(p for p, _ in v)
        out.append(f"{named(x)}: chance {lo:.3f}-{hi:.3f}, ${max(c for _, c in v):.4f}, {billed}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", action="append", required=True, help="SUITE=RUN[,RUN...]")
    ap.add_argument("--b", action="append", required=True, help="SUITE=RUN[,RUN...]")
    ap.add_argument("--briefs", type=Path, action="append", required=True, help="episodes")
    args = ap.parse_args()
    briefs = briefs_of(args.briefs)
    with tempfile.TemporaryDirectory() as folder:
        a, said_a = fitted(args.a, Path(folder), "a")
        b, said_b = fitted(args.b, Path(folder), "b")
    print(f"a: {said_a}; shapes {', '.join(a.shapes())}")
    print(f"b: {said_b}; shapes {', '.join(b.shapes())}")
    for line in offered(a, b, briefs):
        print(f"b offers {line}")
    diff = differences(a, b, briefs)
    for mode, head, mine, theirs in diff:
        print(f"differs ({mode}) on {head!r}: {[named(x) for x in mine]} -> "
              f"{[named(x) for x in theirs]}")  # fmt: skip
    print(f"the same set on {len(briefs) * len(MODES) - len(diff)} of "
          f"{len(briefs) * len(MODES)} (brief, mode) pairs, {len(briefs)} briefs")  # fmt: skip


if __name__ == "__main__":
    main()
