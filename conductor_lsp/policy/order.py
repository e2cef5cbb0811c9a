"""In which order a round's candidates run, and which of them wait for the others.

Each candidate (an ``Option``) is a step some lane would run this round: the floor's
own call, or one of the other lanes' (search's leaves, a routing policy's picks, a model
conductor's whole plan). It has an expected price and, when a routing policy is there
to say it, a chance of turning the tests green.

Running A before B (and B only if A fails) costs ``$A + (1 - P_A) $B``, the other order
``$B + (1 - P_B) $A``; A first is cheaper exactly when ``P_A / $A > P_B / $B``. So the
likeliest per dollar runs first, and the rest only if it fails. ``[fix] prefer`` says
how much waiting that may cost:

- ``balanced`` (the default): the best option by P per $ alone (without a policy: the
  floor's call), then the floor's call if that was not it, then everything else at once,
  each wave only if the ones before it failed. An extra beside the floor's call is paid
  only when that failed too (at once with it, before 2026-12-04, it was paid whenever
  the first failed: replayed, 1.7% more $ and 24% more calls on the HumanEval-fix
  folds at the same solved);
- ``cost``: one at a time, the options cheaper than the floor's call first (likeliest
  per dollar first), then the floor, then the rest at once;
- ``latency``: everything at once, as search always did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..conductor.shapes import ShapeName, read_shape
from ..conductor.static import DIRECT, RETRY
from ..plan import Lane, Step
from ..protocols import WorkerInfo
from .features import Action
from .predict import Policy, index, nominal_cost
from .waving import in_waves


@dataclass(frozen=True)
class Option:
    """A candidate this round may run: a step of one lane (``step`` None: a model
    conductor's plan, not written yet), what one call is expected to cost, and its chance
    of a green answer (None: nothing to say it with)."""

    lane: Lane
    step: Step | None
    price: float
    chance: float | None = None
    #: The earlier steps of its chain, which ``step`` sees (a shape's helper step).
    before: tuple[Step, ...] = ()
    #: The review shape: the worker that reviews ``step``'s answer when it is red.
    review: str = ""


def estimate(
    lane: Lane,
    step: Step,
    pool: Sequence[WorkerInfo],
    brief: str,
    prompt_tokens: int,
    policy: Policy | None,
    before: tuple[Step, ...] = (),
) -> Option:
    """The option of one step (with the earlier steps of its chain, ``before``): the
    policy's chance and bill for its action, else its workers' prices on this prompt
    and no chance."""
    infos = [next((w for w in pool if w.name == s.worker), None) for s in (*before, step)]
    price = sum(nominal_cost(i, prompt_tokens) if i is not None else math.inf for i in infos)
    action = None if policy is None else action_of(policy.wordings, (*before, step))
    if policy is None or action is None:
        return Option(lane, step, price, before=before)
    chance, cost = policy.figures(brief, action, pool, prompt_tokens)
    return Option(lane, step, cost, chance, before)


def action_of(wordings: dict[str, str], steps: Sequence[Step]) -> Action | None:
    """The policy's action for a chain of steps (its leaf last): a solo call in a wording
    it knows (a retry is static's direct call in a later round), or a known shape."""
    shape = read_shape(steps)
    if shape.name is ShapeName.SOLO:
        leaf = steps[-1]
        key = index(wordings, DIRECT if leaf.subtask == RETRY else leaf.subtask)
        return None if key is None else Action(leaf.worker, key)
    direct = index(wordings, DIRECT)
    return None if direct is None else Action(shape.worker, direct, shape.name, shape.helper)


def waves(options: Sequence[Option], prefer: str) -> list[list[Option]]:
    """The options in waves: a wave runs at once, the next only if it found no green."""
    return in_waves(
        options, prefer, lambda o: o.lane is Lane.FLOOR, lambda o: o.price, lambda o: o.chance
    )


def chance_any(options: Sequence[Option]) -> float | None:
    """The chance that at least one option turns green (None: some chance unknown)."""
    if not options or any(o.chance is None for o in options):
        return None
    return 1 - math.prod(1 - (o.chance or 0.0) for o in options)
