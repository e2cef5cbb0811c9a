"""The plans a routing policy writes: a round's leaves (static or search led by a policy),
what a model conductor is told of the pool (``figures``), and a model conductor's plan
with the policy's pick of worker for each step (``steer``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..conductor.shapes import (
    Chain,
    ShapeName,
    architect_steps,
    joined,
    pipeline_steps,
    review_steps,
)
from ..conductor.static import RETRY, static_plan, strongest
from ..plan import Plan, Step, infer_role
from ..protocols import WorkerInfo
from .features import Action
from .predict import Policy, index
from .sets import HOPELESS


def round_plan(
    policy: Policy,
    brief: str,
    pool: Sequence[WorkerInfo],
    max_steps: int,
    *,
    later: bool,
    budget: float = math.inf,
    prefer: str = "latency",
) -> Plan:
    """A round's plan: the chosen leaves; in a later round the strongest worker's retry
    first (escalation), then the policy's best other pick. When nothing is worth a call
    the first round is static's own (which the floor lane already runs: no extra lane)."""
    if later:
        strong = strongest(pool)
        steps = [Step(strong.name, RETRY, (), "debugging")]
        for a, p, _ in policy.rank(brief, pool):
            if a.solo and a.worker != strong.name and len(steps) < max_steps and p >= HOPELESS:
                steps.append(Step(a.worker, RETRY, (), "debugging"))
                break
    else:
        picks = [a for a, _, _ in policy.choose(brief, pool, max_steps, budget, prefer=prefer)]
        firsts = {Action(a.helper, a.wording) for a in picks if a.shape == ShapeName.REVIEW}
        chosen = [chain(policy, a) for a in picks if a not in firsts]  # a review makes that call
        while sum(len(c.steps) for c in chosen) > max_steps:
            chosen.pop()  # drop the least likely: a shape is two or three steps
        steps = list(joined(chosen))
        if not steps:
            steps = list(static_plan(pool, max_steps).steps)
    notes = tuple(figures(policy, brief, pool).splitlines())
    return Plan(steps=tuple(steps), source="policy", notes=notes)


def chain(policy: Policy, action: Action) -> Chain:
    """The steps of one chosen action: one call, or its shape's steps."""
    if action.shape == ShapeName.ARCHITECT:
        return Chain(architect_steps(action.helper, action.worker))
    if action.shape == ShapeName.PIPELINE:
        return Chain(pipeline_steps(action.helper, action.worker))
    text = policy.wordings[action.wording]
    if action.shape == ShapeName.REVIEW:
        return Chain(review_steps(Step(action.helper, text, (), infer_role(text)), action.worker))
    return Chain((Step(action.worker, text, (), infer_role(text)),))


def figures(policy: Policy, brief: str, pool: Sequence[WorkerInfo]) -> str:
    """What a model conductor is told: per worker, its best wording's chance and $."""
    best: dict[str, tuple[float, float, str]] = {}
    for a, p, c in policy.rank(brief, pool):
        if a.solo and a.worker not in best:
            best[a.worker] = (p, c, a.wording)
    return "\n".join(
        f"{w}: fixes similar tasks {p:.0%} of the time (asked '{k}'), about ${c:.4f}"
        for w, (p, c, k) in best.items()
    )


def steer(plan: Plan, policy: Policy, brief: str, pool: Sequence[WorkerInfo]) -> Plan:
    """The conductor's plan with each step's worker replaced by the policy's pick for that
    step's wording (static's, for a wording it does not know): the cheapest worker
    whose chance reaches the target, else the likeliest."""
    steps = []
    for s in plan.steps:
        if _is_tool(s.worker, pool):
            steps.append(s)
            continue
        wording = index(policy.wordings, s.subtask) or "direct"
        ranked = [
            (policy.p_green(brief, Action(w.name, wording), pool), w.price_in + w.price_out, w.name)
            for w in pool
            if not w.is_tool
        ]
        sure = [r for r in ranked if r[0] >= policy.target]
        best = min(sure, key=lambda r: r[1])[2] if sure else max(ranked)[2]
        steps.append(dataclasses.replace(s, worker=best))
    note = "workers chosen by the routing policy"
    return dataclasses.replace(plan, steps=tuple(steps), notes=(*plan.notes, note))


def _is_tool(name: str, pool: Sequence[WorkerInfo]) -> bool:
    return any(w.name == name and w.is_tool for w in pool)
