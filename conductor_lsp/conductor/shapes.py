"""Plan shapes: the small step graphs a round's candidates come from, with the workers
filled in. A plan of the RL Conductor's three lists (workers, subtasks, access) splits
into *chains*, one per leaf (the leaf and the earlier steps it sees); each chain reads
as a shape, so the routing policy learns from a model conductor's plans, search's
leaves and its own picks alike.

- ``solo``: one call that writes the edits (static's, search's leaves).
- ``architect``: a helper describes the change in words (no edit format), then the
  worker writes the edits seeing that description (the editor). Why: a strong model's
  answer often holds the right change in a format the edits layer cannot apply; a
  reasoning step and an editing step can be given to different workers.
- ``review``: the helper writes a candidate; only when the tests find it red does the
  worker see it with the failures its sandbox produced and write a corrected one, in
  the same round (both are judged). In a plan it is two steps, the second's subtask
  ``REVIEW`` seeing the first; the fix loop runs the second as a follow-up once the
  first is judged (``REVIEWED`` starts its subtask, which names the first's worker).
- ``pipeline``: the fixed analysis -> generation -> review chain as an action: the
  helper analyses, the worker writes the change seeing that analysis, then reviews its
  own change seeing both (three calls; ``pipeline``'s plan, with its workers chosen).
  Why: a third step once found a fix no single call and no two-step shape found.
- ``chain``: any other chain (a model conductor's): the helper is its first step's
  worker.

A *repair* is not chosen: when an answer holds no edit that applies, the cheapest
worker turns it into edits in the same round (``[fix] repair``); its subtask carries
the answer and starts with ``REPAIR``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..edits import NO_EDIT
from ..plan import Plan, Role, Step
from ..testrun import clip

DESCRIBE = (
    "Describe the change that makes the failing tests pass, in words: which lines of which "
    "file, what they become, and why. Write no code blocks and no edit blocks: another "
    "step writes the edits from your description."
)
EDIT_FROM = (
    "Write the code change the earlier step describes (check it against the code shown), "
    "as edits of the files shown."
)
REVIEW = (
    "Review the earlier answer against the failing tests; find what is wrong with it and "
    "write the complete corrected code change."
)
#: The pipeline's three subtasks (``pipeline``'s plan, and the pipeline shape).
ANALYSIS = (
    "Analyse the task and the code: find the cause (or the design), name the exact "
    "places to change and why. Do not write the full code yet."
)
GENERATION = "Write the code change."
DEBUGGING = (
    "Review the proposed change against the task and the failing tests; fix any mistake "
    "and write the complete final change."
)
REVIEWED = "An earlier answer to this task did not make the tests pass"
REPAIR = "An earlier answer to this task held no edit that could be applied"
#: How much of an earlier answer (and of its tests' output) a follow-up is shown: its
#: head and its tail.
FOLLOW_UP_KEEP = 3_000


class ShapeName(StrEnum):
    SOLO = "solo"
    ARCHITECT = "architect"
    REVIEW = "review"
    PIPELINE = "pipeline"
    CHAIN = "chain"


@dataclass(frozen=True)
class Shape:
    """A shape with its workers: ``worker`` writes the edits (the leaf), ``helper`` (for
    the shapes of two workers) the step it sees."""

    name: ShapeName = ShapeName.SOLO
    worker: str = ""
    helper: str = ""

    def describe(self) -> str:
        """For people: "architect: big describes, small edits"."""
        if self.name is ShapeName.SOLO:
            return f"solo: {self.worker}"
        if self.name is ShapeName.ARCHITECT:
            return f"architect: {self.helper} describes, {self.worker} edits"
        if self.name is ShapeName.REVIEW:
            return f"review: {self.worker} corrects {self.helper}'s red answer"
        if self.name is ShapeName.PIPELINE:
            return f"pipeline: {self.helper} analyses, {self.worker} writes and reviews"
        return f"chain: from {self.helper} to {self.worker}"


@dataclass(frozen=True)
class Chain:
    """One leaf and the earlier steps it sees, in plan order; access lists are indices
    within the chain, so it runs as a plan of its own."""

    steps: tuple[Step, ...]

    @property
    def leaf(self) -> Step:
        return self.steps[-1]

    @property
    def before(self) -> tuple[Step, ...]:
        return self.steps[:-1]

    def shape(self) -> Shape:
        return read_shape(self.steps)


def architect_steps(helper: str, worker: str, *, later: bool = False) -> tuple[Step, ...]:
    """The architect shape's two steps (in a later round the helper sees the failures of
    the previous attempt, as every step of a later round does)."""
    role: Role = "debugging" if later else "analysis"
    return (Step(helper, DESCRIBE, (), role), Step(worker, EDIT_FROM, (0,), "generation"))


def review_steps(first: Step, worker: str) -> tuple[Step, ...]:
    """The review shape as a plan: ``first`` (a call alone), then the worker's review
    seeing it."""
    return (dataclasses.replace(first, access=()), Step(worker, REVIEW, (0,), "debugging"))


def pipeline_steps(helper: str, worker: str) -> tuple[Step, ...]:
    """The pipeline shape's three steps: the helper's analysis, the worker's change seeing
    it, the worker's review of that change seeing both."""
    return (
        Step(helper, ANALYSIS, (), "analysis"),
        Step(worker, GENERATION, (0,), "generation"),
        Step(worker, DEBUGGING, (0, 1), "debugging"),
    )


def last_steps(steps: Sequence[Step], n: int) -> tuple[Step, ...]:
    """A chain cut to its last ``n`` steps (a plan of fewer steps): what a kept step saw of
    the dropped ones is dropped too."""
    cut = max(0, len(steps) - max(1, n))
    return tuple(
        dataclasses.replace(s, access=tuple(j - cut for j in s.dependencies(i) if j >= cut))
        for i, s in enumerate(steps)
        if i >= cut
    )


def calls(shape: Shape) -> tuple[str, ...]:
    """The workers a shape calls, one per call in order (a review's second call runs only
    when the first was red)."""
    if shape.name is ShapeName.SOLO:
        return (shape.worker,)
    if shape.name is ShapeName.PIPELINE:
        return (shape.helper, shape.worker, shape.worker)
    return (shape.helper, shape.worker)


def read_shape(steps: Sequence[Step]) -> Shape:
    """The shape of a chain (its leaf last)."""
    leaf = steps[-1]
    if len(steps) == 1:
        reviewed = reviewed_worker(leaf.subtask)
        if reviewed:  # a review's follow-up, run alone once the first answer was red
            return Shape(ShapeName.REVIEW, leaf.worker, reviewed)
        return Shape(ShapeName.SOLO, leaf.worker)
    if len(steps) == 2 and leaf.subtask == REVIEW:
        return Shape(ShapeName.REVIEW, leaf.worker, steps[0].worker)
    if len(steps) == 2 and steps[0].role != "generation":
        return Shape(ShapeName.ARCHITECT, leaf.worker, steps[0].worker)
    if _is_pipeline(steps):
        return Shape(ShapeName.PIPELINE, leaf.worker, steps[0].worker)
    return Shape(ShapeName.CHAIN, leaf.worker, steps[0].worker)


def _is_pipeline(steps: Sequence[Step]) -> bool:
    """The pipeline's three subtasks, each step seeing every earlier one, the last two on
    one worker."""
    return (
        tuple(s.subtask for s in steps) == (ANALYSIS, GENERATION, DEBUGGING)
        and steps[1].worker == steps[2].worker
        and all(set(s.dependencies(i)) == set(range(i)) for i, s in enumerate(steps))
    )


def members(steps: Sequence[Step], leaf: int) -> list[int]:
    """The indices of step ``leaf``'s chain: it and every earlier step it sees."""
    return sorted(_ancestors(steps, leaf) | {leaf})


def chain_of(steps: Sequence[Step], leaf: int) -> Chain:
    """The chain of step ``leaf``: it and every earlier step it sees, in plan order."""
    mine = members(steps, leaf)
    where = {old: new for new, old in enumerate(mine)}
    return Chain(
        tuple(
            dataclasses.replace(steps[i], access=tuple(where[j] for j in steps[i].dependencies(i)))
            for i in mine
        )
    )


def chains(plan: Plan) -> list[Chain] | None:
    """Each leaf's chain, or None when two leaves see one step (splitting would pay for
    it twice: such a plan runs whole)."""
    owner: dict[int, int] = {}
    for leaf in plan.leaves():
        for i in members(plan.steps, leaf):
            if owner.setdefault(i, leaf) != leaf:
                return None
    return [chain_of(plan.steps, leaf) for leaf in plan.leaves()]


def joined(chains: Sequence[Chain]) -> tuple[Step, ...]:
    """The steps of chains run as one plan: each chain's access lists moved to where its
    steps land."""
    out: list[Step] = []
    for chain in chains:
        start = len(out)
        for k, s in enumerate(chain.steps):
            mine = range(k) if s.access == "all" else s.access
            out.append(dataclasses.replace(s, access=tuple(start + j for j in mine)))
    return tuple(out)


def _ancestors(steps: Sequence[Step], index: int) -> set[int]:
    out: set[int] = set()
    todo = list(steps[index].dependencies(index))
    while todo:
        i = todo.pop()
        if i not in out:
            out.add(i)
            todo += steps[i].dependencies(i)
    return out


def repair_subtask(answer: str, why: str, files: Sequence[str]) -> str:
    """A repair's subtask: the answer that held no applicable edit, and what to do."""
    head = clip(answer, FOLLOW_UP_KEEP, FOLLOW_UP_KEEP)
    where = ", ".join(f"`{f}`" for f in files) or "the files shown"
    return (
        f"{REPAIR} ({why}). Turn the change it describes into edits of {where}, in the "
        "required format, with SEARCH text copied exactly from the files shown. Change "
        "nothing it does not describe.\n\nThe earlier answer:\n"
        f"<<<\n{head}\n>>>"
    )


def is_repair(subtask: str) -> bool:
    return subtask.startswith(REPAIR)


def review_subtask(helper: str, answer: str, failures: str, *, applied: bool = True) -> str:
    """A review's follow-up subtask: the red answer and what the tests said of it, or,
    where none of its edits applied (``applied`` false), why (``failures``: the reasons
    the edits were refused): the reviewer is never told of edits and a test run that
    did not happen."""
    what = (
        "Its edits were applied in a sandbox of the files shown (they are not applied to "
        "the files you see) and the tests still fail. Find what is wrong with it"
        if applied
        else "It held no edit that could be applied to the files shown, so the tests did "
        "not run on it. Find the change it meant, or what is wrong with it,"
    )
    said = "The tests after its edits" if applied else "Why no edit of it applied"
    if not applied:
        failures = f"{NO_EDIT}: {failures}"
    return (
        f"{REVIEWED} (the answer of {helper}). {what} and write the complete corrected "
        "code change as edits of the files shown.\n\nThe earlier answer:\n"
        f"<<<\n{clip(answer, FOLLOW_UP_KEEP, FOLLOW_UP_KEEP)}\n>>>\n\n"
        f"{said}:\n<<<\n{clip(failures, FOLLOW_UP_KEEP, FOLLOW_UP_KEEP)}\n>>>"
    )


_REVIEWED_OF = re.compile(re.escape(REVIEWED) + r" \(the answer of ([^)]+)\)")


def reviewed_worker(subtask: str) -> str:
    """The worker whose answer a review's follow-up corrects ('' for any other subtask)."""
    m = _REVIEWED_OF.match(subtask)
    return m.group(1) if m else ""


def is_follow_up(subtask: str) -> bool:
    """A repair or a review's follow-up: a call the fix loop adds once an answer is judged."""
    return is_repair(subtask) or bool(reviewed_worker(subtask))
