"""Fitting a routing policy from judged candidates: every candidate a test verdict judged
is an example (the task's brief, the pool, the (worker, wording) that answered, green or
not, and what its call cost). Episodes give them (with search, every leaf is one), and
so does an ``eval`` run (``single:*``: every worker on every task).
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..conductor.shapes import Chain, chain_of, is_repair, members
from ..conductor.static import DIRECT, RETRY
from ..episodes.records import Episode, Leaf
from ..protocols import WorkerInfo
from . import rates
from .features import Action, Parts, feature_parts, sigmoid, task_key
from .order import action_of
from .predict import Policy, shrunk
from .rates import Bill

WORD_DROPOUT = 0.7
#: How far one pass of an online update moves an example's own log-odds, at most.
NUDGE_RATE = 1.0
#: Passes an online update takes over one job's verdicts: a nudge, not a refit.
NUDGE_PASSES = 5
#: The steps ``trusted`` weighs the fitted weights by against the base rates.
TRUSTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
#: Fewer tasks than this say too little to measure the weights by.
TRUST_TASKS = 6
#: At most this many (row, pass) updates per fit that measures the trust: with many
#: verdicts each pass holds many updates, and the fit of 1,000 stays under a second
#: (1.14 s with half the passes, 0.61 s without measuring; bench/README.md).
TRUST_ROW_PASSES = 4000
#: What an online update keeps of a base rate's counts before it adds a verdict: older
#: verdicts fade (about 1 / (1 - FORGET) remembered once a fitted record has faded), so
#: a worker that turned bad is dropped when the trust is low and only the rates decide:
#: after 27 failing jobs, not 162, once fitted on 30 verdicts a wording. Scaling a long
#: record down at once dropped it after 14 but cost the query shift 1.07x the in-suite
#: policy's $ per solved, against 0.93x (bench/README.md, "When the pool changes").
FORGET = 0.8


@dataclass
class Example:
    """One judged candidate: the task's brief, the pool, the action, and what came of it."""

    brief: str
    workers: Sequence[WorkerInfo]
    action: Action
    green: bool
    cost: float = 0.0
    seconds: float = 0.0


def fit(
    policy: Policy,
    examples: Sequence[Example],
    *,
    epochs: int = 30,
    l2: float = 1e-3,
    word_dropout: float = WORD_DROPOUT,
    seed: int = 0,
) -> None:
    """Fit ``policy`` (on top of what it knew): logistic regression by AdaGrad over the
    examples (seconds for thousands), each action's bills and each action kind's base
    rate, and how far to trust the weights against those rates (``trusted``).

    Each pass leaves out each instruction word with chance ``word_dropout``: words
    that only one task has would otherwise explain its verdict away, and what the
    task's shape says (two files to change, an error type) would learn nothing from
    it. Measured on the synthetic pool (bench/train_conductor.py): without it a
    two-file bug was sent to the cheap worker alone at P = 0.94; with 0.7, 0.57.

    The examples are taken in one canonical order (``canonical``), whatever order they
    come in: AdaGrad's steps and the dropout's draws follow the order, and a fit should
    be a function of what it learned from, not of which file was read first.
    """
    examples = canonical(examples)
    rows = _rows(policy, examples)
    _train(policy.weights, [(parts, green) for _, parts, green in rows], epochs, l2,
           _dropper(word_dropout, seed))  # fmt: skip
    add_bills(policy, examples)
    add_rates(policy, examples)
    policy.trust = trusted(policy, rows, epochs, l2, word_dropout, seed)


def canonical(examples: Iterable[Example]) -> list[Example]:
    """The examples sorted by everything that tells them apart (duplicates stay)."""
    return sorted(examples, key=_example_key)


def _example_key(e: Example) -> tuple[Any, ...]:
    a = e.action
    pool = tuple((w.name, w.price_in, w.price_out, w.strength, w.provider) for w in e.workers)
    return (e.brief, a.worker, a.wording, a.shape, a.helper, e.green, e.cost, e.seconds, pool)


def _train(
    w: dict[int, float],
    rows: Sequence[tuple[Parts, bool]],
    epochs: int,
    l2: float,
    drop: Callable[[], bool] | None,
) -> None:
    g2: dict[int, float] = {}
    weight, square, root, zero = w.get, g2.get, math.sqrt, itertools.repeat(0.0)
    for _ in range(epochs):
        for parts, y in rows:
            x = parts.pick(drop, ordered=False)
            err = sigmoid(sum(map(weight, x, zero))) - float(y)
            for i in x:  # AdaGrad, one feature at a time
                wi = weight(i, 0.0)
                grad = err + l2 * wi
                gi = square(i, 0.0) + grad * grad
                g2[i] = gi
                w[i] = wi - 0.5 * grad / root(gi + 1e-8)


def trusted(
    policy: Policy,
    rows: Sequence[tuple[Example, Parts, bool]],
    epochs: int,
    l2: float,
    word_dropout: float,
    seed: int,
) -> float:
    """How far to trust fitted weights against the base rates: the ``TRUSTS`` step whose
    chances score best (log loss) on tasks left out, two folds by task, each fitted as
    ``fit`` fits in half the passes, fewer past ``TRUST_ROW_PASSES`` (the fit's time; the
    step chosen was the same or a neighbour in bench's folds). Fewer than
    ``TRUST_TASKS`` tasks say too little: ``policy.trust`` stays.

    Why: on bench/tasks and the HumanEval-fix sample (17 tasks a fold) the weights alone
    scored worse on tasks they had not seen than the base rates alone (bench/README.md,
    "How sure the policy is"); a pool where words tell its workers apart keeps them."""
    key = {brief: task_key(brief) for brief in {e.brief for e, _, _ in rows}}
    tasks = sorted(set(key.values()))
    if len(tasks) < TRUST_TASKS:
        return policy.trust
    scored: list[tuple[float, float | None, bool]] = []
    for k in range(2):
        half = set(tasks[k::2])
        held = {brief for brief, task in key.items() if task in half}
        w: dict[int, float] = {}
        train = [(p, g) for e, p, g in rows if e.brief not in held]
        passes = max(5, min(epochs // 2, TRUST_ROW_PASSES // max(1, len(train))))
        _train(w, train, passes, l2, _dropper(word_dropout, seed))
        counted = Policy()  # the base rates of the training half alone
        add_rates(counted, [e for e, _, _ in rows if e.brief not in held])
        for e, parts, green in rows:
            if e.brief in held:
                view = policy.task_view(e.brief)
                z = sum(w.get(i, 0.0) for i in parts.pick())
                scored.append((z, counted.base_rate(view, e.action, e.workers), green))
    return min(TRUSTS, key=lambda t: _log_loss(scored, t))


def _log_loss(scored: Sequence[tuple[float, float | None, bool]], trust: float) -> float:
    loss = 0.0
    for z, rate, green in scored:
        p = min(max(sigmoid(shrunk(z, rate, trust)), 1e-6), 1 - 1e-6)
        loss -= math.log(p if green else 1 - p)
    return loss


def nudge(
    policy: Policy,
    examples: Sequence[Example],
    *,
    passes: int = NUDGE_PASSES,
    rate: float = NUDGE_RATE,
    word_dropout: float = WORD_DROPOUT,
    seed: int = 0,
) -> None:
    """Move ``policy`` toward a few new verdicts (online, after a job), each pass
    changing an example's own log-odds by at most ``rate``: the step is shared among
    its features, not taken in full by each.

    Why not ``fit``: AdaGrad steps every feature it has not seen by the full rate, and a
    task from a new suite brings dozens of new words, so one red verdict moved the
    cheap worker's chance on every task of that suite from 0.99 to 0.01 and it was
    never asked again (``bench/shift.py``: 1.97x the in-suite policy's $ per solved).
    """
    drop = _dropper(word_dropout, seed)
    w = policy.weights
    rows = _rows(policy, examples)
    for _ in range(passes):
        for _e, parts, y in rows:
            x = parts.pick(drop)
            err = sigmoid(sum(w.get(i, 0.0) for i in x)) - float(y)
            step = rate * err / max(1, len(x))
            for i in x:
                w[i] = w.get(i, 0.0) - step
    add_bills(policy, examples)
    add_rates(policy, examples, FORGET)


def _dropper(word_dropout: float, seed: int) -> Callable[[], bool] | None:
    """Asked once per droppable group of a pass: leave it out (None: keep every word)."""
    if not word_dropout:
        return None
    rng = random.Random(seed)
    return lambda: rng.random() < word_dropout


def _rows(policy: Policy, examples: Sequence[Example]) -> list[tuple[Example, Parts, bool]]:
    """Each example's feature parts (a worker not in its pool has none, and is left out)."""
    return [
        (e, parts, e.green)
        for e in examples
        if (parts := feature_parts(policy.task_view(e.brief), e.action, e.workers)) is not None
    ]


def add_bills(policy: Policy, examples: Sequence[Example]) -> None:
    """Each action's worker's bills: answers, $ and seconds."""
    for e in examples:
        bill = policy.bills.setdefault(e.action.bill_key, Bill())
        bill.answers += 1
        bill.cost += e.cost
        bill.seconds += e.seconds


def add_rates(policy: Policy, examples: Sequence[Example], keep: float = 1.0) -> None:
    """Count each verdict into its worker's base rate within its action kind (green,
    judged: ``Policy.prior``), after keeping ``keep`` of what it had counted (1: all, as a
    fit counts; an online update forgets, ``FORGET``)."""
    for e in examples:
        view = policy.task_view(e.brief)
        keys = rates.keys(view, e.action, e.workers)
        if keys is None:
            continue
        if keep < 1:  # online: a run of reds a sure worker would not have cuts its record
            rates.watch(policy.prior, policy.reds, view, e.action, e.workers, e.green)
        rates.count(policy.prior, keys[1], e.green, keep)


def examples_from(episodes: Sequence[Episode], policy: Policy) -> list[Example]:
    """Every judged candidate of every episode, read as its chain's action (a leaf alone
    is a solo call; a leaf that saw earlier steps, their shape: a model conductor's
    plans teach the same learner); a subtask that won joins the library. A repair is
    no action the policy chooses, and teaches it nothing."""
    out = []
    for e in episodes:
        if e.outcome is None:
            continue
        models = {w.name for w in e.workers if not w.is_tool}
        for leaf in e.outcome.leaves or _only_leaf(e):
            if leaf.failing_after is None and not leaf.refused:
                continue  # never judged
            if not 0 <= leaf.step < len(e.steps):
                continue
            chain = chain_of(e.steps, leaf.step)
            if any(s.worker not in models for s in chain.steps) or is_repair(chain.leaf.subtask):
                continue
            green = leaf.green and not e.undone and not e.rejected
            action = _action(policy, chain, green)
            if action is None:
                continue
            bills = [e.bills[i] for i in members(e.steps, leaf.step) if i < len(e.bills)]
            cost, took = sum(b.cost for b in bills), sum(b.seconds for b in bills)
            out.append(Example(e.task, e.workers, action, green, cost, took))
    return out


def _action(policy: Policy, chain: Chain, green: bool) -> Action | None:
    """The action of a judged chain; a solo call in a wording the policy does not know
    joins its library when it won (None: it did not)."""
    action = action_of(policy.wordings, chain.steps)  # a retry reads as the direct call
    if action is not None or chain.before or not green:
        return action
    subtask = DIRECT_OF.get(chain.leaf.subtask, chain.leaf.subtask)
    return Action(chain.leaf.worker, policy.learn_wording(subtask))


#: A later round's retry is static's call on a later round (the brief says which).
DIRECT_OF = {RETRY: DIRECT}


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


def stamp(policy: Policy, sources: Iterable[str], examples: int, **figures: Any) -> None:
    """Record what the policy was fitted on, and when (``doctor`` shows it)."""
    policy.about = {
        "trained_on": list(sources),
        "examples": examples,
        "when": time.strftime("%Y-%m-%d %H:%M"),
        **figures,
    }
