"""Calls a round adds once an answer is judged, in the same round (no round spent):

- a *review* (the review shape): the answer was red, so the worker the plan named sees
  it with what the tests said of it and writes a corrected candidate;
- a *repair* (``[fix] repair``): the answer held no edit that applied, so the cheapest
  worker turns it into edits.

A follow-up is itself never followed up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from ..conductor.shapes import Chain, ShapeName, is_follow_up, repair_subtask, review_subtask
from ..plan import Lane, Step
from ..policy import Option
from ..protocols import WorkerInfo
from .candidates import Candidate, Round

#: (lane, worker, subtask) of a first answer -> the worker that reviews it when red.
Reviews = Mapping[tuple[Lane, str, str], str]


def as_review(option: Option, chain: Chain) -> Option:
    """A review chain's option: its first call, with the reviewer to follow it (priced and
    given its chance as the whole shape)."""
    if chain.shape().name is not ShapeName.REVIEW:
        return option
    first = dataclasses.replace(chain.steps[0], access=())
    return dataclasses.replace(option, step=first, before=(), review=chain.leaf.worker)


def onto_floor(
    floor: Sequence[Option], others: Sequence[Option]
) -> tuple[list[Option], list[Option]]:
    """The floor's options and ``others`` again, where a review in ``others`` whose first
    call is the floor's own call rides on the floor's option instead (the floor makes
    the call; asking it twice would pay twice)."""
    floor, kept = list(floor), []
    for o in others:
        same = next(
            (
                i
                for i, f in enumerate(floor)
                if o.review and f.step and o.step and not f.review
                and (f.step.worker, f.step.subtask) == (o.step.worker, o.step.subtask)
            ),
            None,
        )  # fmt: skip
        if same is None:
            kept.append(o)
        else:
            floor[same] = dataclasses.replace(floor[same], review=o.review)
    return floor, kept


def reviews_of(options: Sequence[Option]) -> dict[tuple[Lane, str, str], str]:
    return {
        (o.lane, o.step.worker, o.step.subtask): o.review
        for o in options
        if o.review and o.step is not None
    }


def follow_ups(
    rnd: Round,
    wave: int,
    lanes: Sequence[Lane],
    pool: Sequence[WorkerInfo],
    reviews: Reviews,
    repair: bool,
    files: Mapping[Lane, Sequence[str]],
) -> list[tuple[Lane, Step]]:
    """The follow-up calls for the answers of ``wave`` (a lane's, in ``lanes``)."""
    models = [w for w in pool if not w.is_tool]
    cheap = min(models, key=lambda w: (w.price_in + w.price_out, w.strength), default=None)
    out = []
    for c in rnd.candidates:
        if c.wave != wave or c.lane not in lanes or c.green or c.verdict is None:
            continue
        step = c.step
        if not step.ok or not step.text.strip() or is_follow_up(step.step.subtask):
            continue
        reviewer = reviews.get((c.lane, step.step.worker, step.step.subtask))
        if reviewer:
            out.append((c.lane, _review(c, reviewer)))
        elif repair and c.verdict.tests is None and cheap is not None:
            why = (c.verdict.errors or "no edit in the required format").strip().splitlines()
            text = repair_subtask(step.text, why[0][:300], files.get(c.lane, ()))
            out.append((c.lane, Step(cheap.name, text, (), "generation")))
    return out


def _review(c: Candidate, reviewer: str) -> Step:
    v = c.verdict
    assert v is not None
    said = v.tests.summary() if v.tests is not None else v.errors
    text = review_subtask(c.worker, c.step.text, said, applied=v.tests is not None)
    return Step(reviewer, text, (), "debugging")
