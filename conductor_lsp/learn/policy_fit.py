"""``train --policy``: a routing policy fitted from recorded verdicts and bills.

Every judged candidate is an example: the task's brief, the pool, the (worker, wording)
that answered, green or not, and what its call cost. Episodes give them (with search,
every leaf is one), and so does an ``eval`` run, through the episodes file beside its
results (``single:*`` strategies: every worker on every task). A fifth of the tasks is
held out to measure the fit (log loss, accuracy, and how often the pick was green), then
the policy is fitted on all of them and saved as JSON.

With ``features`` "hidden" or "both", each task is also read by the conductor model
(``protocols.Embedder``): its hidden state of the brief, centred on the fitting tasks'
mean, cut into bits. "hidden" reads the task's shape and those bits; "both" the words too.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..conductor.policy import Action, Example, Policy, index, stamp
from ..conductor.policy_features import seen_brief
from ..conductor.policy_reading import read_with
from ..conductor.static import BASELINE, RETRY
from ..errors import ConfigError
from ..protocols import Embedder
from ..runtime.episodes import read_episodes
from ..runtime.records import Episode, Leaf

FEATURES = ("words", "hidden", "both")


def eval_episodes(results: Path) -> Path:
    """The episodes file an ``eval`` run wrote beside its results."""
    return results.parent / f"{results.stem}-traces-episodes.jsonl"


def examples_from(episodes: Sequence[Episode], policy: Policy) -> list[Example]:
    """Every judged candidate of every episode; a subtask that won joins the library."""
    out = []
    for e in episodes:
        if e.outcome is None:
            continue
        leaves = e.outcome.leaves or _only_leaf(e)
        for leaf in leaves:
            if leaf.failing_after is None and not leaf.refused:
                continue  # never judged
            if not 0 <= leaf.step < len(e.steps):
                continue
            step = e.steps[leaf.step]
            if not any(w.name == step.worker and not w.is_tool for w in e.workers):
                continue
            green = leaf.green and not e.undone and not e.rejected
            subtask = BASELINE_OF.get(step.subtask, step.subtask)
            key = index(policy.wordings, subtask)
            if key is None:
                if not green:
                    continue  # a wording the policy cannot ask for, and it did not win
                key = policy.learn_wording(subtask)
            bill = e.bills[leaf.step] if leaf.step < len(e.bills) else None
            out.append(
                Example(
                    e.task,
                    e.workers,
                    Action(step.worker, key),
                    green,
                    bill.cost if bill else 0.0,
                    bill.seconds if bill else 0.0,
                )
            )
    return out


#: A later round's retry is the baseline's call on a later round (the brief says which).
BASELINE_OF = {RETRY: BASELINE}


def _only_leaf(e: Episode) -> tuple[Leaf, ...]:
    """An episode of schema version 1: its outcome is its last step's."""
    o = e.outcome
    if o is None or not e.steps:
        return ()
    failing = None if o.failing_after is None else len(o.failing_after)
    return (Leaf(len(e.steps) - 1, e.steps[-1].worker, o.applied, o.refused, o.green, failing),)


def held_out(
    examples: Sequence[Example], fraction: float, seed: int
) -> tuple[list[Example], list[Example]]:
    """Split by task, so no held-out task was seen in fitting."""
    tasks = sorted({e.brief for e in examples})
    random.Random(seed).shuffle(tasks)
    held = set(tasks[: max(1, round(len(tasks) * fraction))]) if len(tasks) > 1 else set()
    return [e for e in examples if e.brief not in held], [e for e in examples if e.brief in held]


def scores(policy: Policy, examples: Sequence[Example]) -> dict[str, float]:
    """Log loss and accuracy of the predictions, and how often the top pick was green."""
    if not examples:
        return {}
    loss = acc = 0.0
    for e in examples:
        p = min(max(policy.p_green(e.brief, e.action, e.workers), 1e-6), 1 - 1e-6)
        loss -= math.log(p if e.green else 1 - p)
        acc += (p >= 0.5) == e.green
    by_task: dict[str, list[Example]] = {}
    for e in examples:
        by_task.setdefault(e.brief, []).append(e)
    picks = 0
    for brief, rows in by_task.items():
        best = max(rows, key=lambda r: policy.p_green(brief, r.action, r.workers))
        picks += best.green
    return {
        "log_loss": round(loss / len(examples), 4),
        "accuracy": round(acc / len(examples), 4),
        "pick_green": round(picks / len(by_task), 4),
        "tasks": len(by_task),
        "examples": len(examples),
    }


def train_policy(
    from_eval: Sequence[Path],
    from_episodes: Sequence[Path],
    out: Path,
    *,
    target: float = 0.8,
    seed: int = 0,
    features: str = "words",
    reader: Embedder | None = None,
    bits: int = 64,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fit, measure on held-out tasks, refit on everything, save; returns the report."""
    if features not in FEATURES:
        raise ConfigError(f"--features is one of {', '.join(FEATURES)}, not {features!r}")
    if features != "words" and reader is None:
        raise ConfigError(f"--features {features} needs a conductor model to read the tasks")
    started = time.monotonic()
    sources = [eval_episodes(p) for p in from_eval] + list(from_episodes)
    episodes: list[Episode] = []
    for path in sources:
        if not path.is_file():
            raise ConfigError(f"no episodes at {path}")
        episodes += read_episodes(path)
    probe = Policy(target=target)
    examples = examples_from(episodes, probe)
    if not examples:
        raise ConfigError("the episodes hold no judged candidate to learn from")
    vectors: dict[str, list[float]] = {}
    if reader is not None and features != "words":
        briefs = sorted({seen_brief(e.brief) for e in examples})
        log(f"reading {len(briefs)} tasks with the conductor model ({reader.model_identity()})")
        vectors = {b: reader.embed(b) for b in briefs}

    def fitted(rows: Sequence[Example]) -> Policy:
        policy = Policy(wordings=dict(probe.wordings), target=target)
        if vectors and reader is not None:
            fitted_on = (e.brief for e in rows)
            model = reader.model_identity()
            read_with(policy, vectors, fitted_on, model, words=features == "both", bits=bits)
        policy.fit(rows)
        return policy

    train, held = held_out(examples, 0.2, seed)
    figures = scores(fitted(train), held)
    policy = fitted(examples)
    seconds = time.monotonic() - started
    stamp(
        policy,
        [str(p) for p in sources],
        len(examples),
        held_out=figures,
        seconds=round(seconds, 2),
        features=features,
    )
    policy.save(out)
    log(
        f"policy fitted on {len(examples)} judged candidates from {len(episodes)} episodes in "
        f"{seconds:.1f}s; held-out {figures}: {out}"
    )
    return dict(policy.about)
