"""Which learner routes best from a few dozen verdicts: today's logistic regression, a
k-nearest-neighbour vote, and a Thompson-sampling bandit, on the same recorded tables.

A table is every (task, action) verdict and bill of recorded ``eval`` runs (``single:*``
for every worker in the direct wording, ``search:wording`` for the "find the cause" one),
read from their episodes as ``train --policy`` reads them. Tasks are split in folds; each
learner is fitted on the other folds' verdicts and then, for each held-out task, tries
actions in order of its chance per dollar, the floor's own action (the strongest worker,
direct) always among them, until one is green: what it paid and whether it solved, as
the fix loop's cost mode would, from the table, with no model called. It also fits each
learner on 1,000 verdicts and reports the seconds.

    python bench/learners.py --from-eval RUN.jsonl [RUN2.jsonl ...] [--folds 5]
    python bench/learners.py --scripted     # records the scripted pool's table first
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import episodes_of, table

from conductor_lsp.policy import Action, Example, Policy, examples_from, fit
from conductor_lsp.policy.features import task_features, worker_features
from conductor_lsp.protocols import WorkerInfo

Chance = Callable[[str, Action, Sequence[WorkerInfo]], float]


def key(e_brief: str, action: Action, pool: Sequence[WorkerInfo]) -> tuple[str, ...]:
    """What carries over between pools: the worker's ranks and the wording."""
    info = next(w for w in pool if w.name == action.worker)
    _, ranks = worker_features(info, pool)
    return (*ranks, action.wording)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


class Logistic:
    """The policy's learner; ``trust`` fixed overrides the one ``fit`` measures (1: the
    weights alone, 0: the base rates alone)."""

    def __init__(self, trust: float | None = None) -> None:
        self.trust = trust
        self.name = {None: "logistic (the policy's: trust as fitted)",
                     1.0: "logistic, weights alone (trust 1)",
                     0.0: "base rates alone (trust 0)"}.get(trust, f"trust {trust}")  # fmt: skip

    def fit(self, rows: Sequence[Example]) -> Chance:
        policy = Policy()
        fit(policy, rows)
        if self.trust is not None:
            policy.trust = self.trust
        return policy.p_green


class Neighbours:
    """The k most similar training tasks' verdicts for the same (ranks, wording)."""

    name = "k nearest neighbours"

    def __init__(self, k: int = 5) -> None:
        self.k = k

    def fit(self, rows: Sequence[Example]) -> Chance:
        by_key: dict[tuple[str, ...], list[tuple[frozenset[str], bool]]] = defaultdict(list)
        for e in rows:
            by_key[key(e.brief, e.action, e.workers)].append(
                (frozenset(task_features(e.brief)), e.green)
            )

        def chance(brief: str, action: Action, pool: Sequence[WorkerInfo]) -> float:
            seen = by_key.get(key(brief, action, pool), [])
            me = frozenset(task_features(brief))
            near = sorted(seen, key=lambda r: -similarity(me, r[0]))[: self.k]
            weights = [similarity(me, f) + 1e-3 for f, _ in near]
            return (sum(w * g for w, (_, g) in zip(weights, near, strict=True)) + 0.5) / (
                sum(weights) + 1.0
            )

        return chance


class Thompson:
    """A Beta posterior per (ranks, wording), its counts weighted by task similarity; the
    chance is one draw from it (so an unsure action is sometimes tried first)."""

    name = "Thompson sampling"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def fit(self, rows: Sequence[Example]) -> Chance:
        by_key: dict[tuple[str, ...], list[tuple[frozenset[str], bool]]] = defaultdict(list)
        for e in rows:
            by_key[key(e.brief, e.action, e.workers)].append(
                (frozenset(task_features(e.brief)), e.green)
            )

        def chance(brief: str, action: Action, pool: Sequence[WorkerInfo]) -> float:
            me = frozenset(task_features(brief))
            a = b = 1.0
            for f, g in by_key.get(key(brief, action, pool), []):
                w = similarity(me, f) ** 2
                a, b = a + w * g, b + w * (1 - g)
            return self.rng.betavariate(a, b)

        return chance


def tables(examples: Sequence[Example]) -> dict[str, list[Example]]:
    out: dict[str, list[Example]] = defaultdict(list)
    for e in examples:
        out[e.brief].append(e)
    return out


def replay_task(rows: Sequence[Example], chance: Chance) -> tuple[bool, float]:
    """Actions by chance per dollar, the floor's always among them, until a green one."""
    pool = rows[0].workers
    models = [w for w in pool if not w.is_tool]
    top = max(models, key=lambda w: (w.strength, w.price_out))
    floor = next((e for e in rows if e.action == Action(top.name, "direct")), None)
    ranked = sorted(rows, key=lambda e: -chance(e.brief, e.action, e.workers) / max(e.cost, 1e-9))
    paid = 0.0
    tried: list[Example] = []
    for e in ranked:
        if chance(e.brief, e.action, e.workers) < 0.05 and e is not floor:
            continue
        tried.append(e)
        paid += e.cost
        if e.green:
            return True, paid
    if floor is not None and floor not in tried:
        paid += floor.cost
        return floor.green, paid
    return False, paid


def compare(examples: Sequence[Example], folds: int, seed: int) -> list[list[object]]:
    by_task = tables(examples)
    names = sorted(by_task)
    random.Random(seed).shuffle(names)
    learners = [Logistic(), Logistic(1.0), Logistic(0.0), Neighbours(), Thompson(seed)]
    rows = []
    static = [(any(e.green for e in r if e.action.wording == "direct" and _is_top(e)),
               sum(e.cost for e in r if e.action.wording == "direct" and _is_top(e)))
              for r in by_task.values()]  # fmt: skip
    rows.append(["static (the floor alone)", f"{sum(s for s, _ in static)}/{len(static)}",
                 f"{sum(c for _, c in static):.4f}", "-"])  # fmt: skip
    for learner in learners:
        solved, paid = 0, 0.0
        for k in range(folds):
            held = set(names[k::folds])
            train = [e for e in examples if e.brief not in held]
            chance = learner.fit(train)
            for name in held:
                ok, cost = replay_task(by_task[name], chance)
                solved, paid = solved + ok, paid + cost
        seconds = _fit_seconds(learner, examples)
        rows.append([learner.name, f"{solved}/{len(names)}", f"{paid:.4f}", seconds])
    return rows


def _is_top(e: Example) -> bool:
    models = [w for w in e.workers if not w.is_tool]
    top = max(models, key=lambda w: (w.strength, w.price_out))
    return e.action.worker == top.name


def _fit_seconds(learner: object, examples: Sequence[Example]) -> str:
    many = [examples[i % len(examples)] for i in range(1000)]
    started = time.monotonic()
    chance = learner.fit(many)  # type: ignore[attr-defined]
    for e in many[:50]:
        chance(e.brief, e.action, e.workers)
    return f"{time.monotonic() - started:.2f}"


def scripted_runs(out: Path) -> list[Path]:
    """The scripted pool of bench/cost_pool.py, every worker on every task, both wordings."""
    from cost_pool import SUITE, pool_toml
    from standin import StandIn
    from train_conductor import responder

    from conductor_lsp import load_config
    from conductor_lsp.eval import evaluate, load_suite, parse_strategies

    stand = StandIn().start()
    stand.responder = responder(load_suite(SUITE))
    try:
        (out / "pool.toml").write_text(pool_toml(stand.url))
        base = load_config(out, out / "pool.toml")
        runs = []
        for names in ("single:small,single:big", "search:wording"):
            results = out / f"{names.replace(':', '-').replace(',', '+')}.jsonl"
            strategies = parse_strategies(names, base.workers)
            asyncio.run(evaluate(load_suite(SUITE), strategies, base, out=results,
                                 max_iterations=1, jobs=2))  # fmt: skip
            runs.append(results)
        return runs
    finally:
        stand.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--from-eval", nargs="*", default=[], help="recorded eval results (JSONL)")
    ap.add_argument("--scripted", action="store_true", help="record the scripted pool's table")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--first-round", action="store_true", help="first-round verdicts only")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    runs = [Path(p) for p in args.from_eval]
    if args.scripted:
        runs += scripted_runs(Path(tempfile.mkdtemp(prefix="learners-")))
    episodes = episodes_of(runs)
    examples = examples_from(episodes, Policy())
    if args.first_round:  # a retry's brief names the attempt before it: a task of its own
        examples = [e for e in examples if "## Previous attempt" not in e.brief]
        once = {(e.brief, e.action): e for e in reversed(examples)}  # a request asked twice
        examples = [e for e in examples if once[(e.brief, e.action)] is e]  # by two runs
    print(f"{len(examples)} verdicts on {len(tables(examples))} tasks from {len(runs)} runs")
    rows = compare(examples, args.folds, args.seed)
    print(table(["learner", "solved", "$", "fit s (1,000 verdicts)"], rows))


if __name__ == "__main__":
    main()
