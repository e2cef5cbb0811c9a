"""Episodes as typed records, written and read through the same dataclasses: what the
readers (``episodes``, the summary, training, the reward, the routing policy) may rely
on, checked once where the JSON is read.

Four record types go to the file, one JSON object a line, joined by id on reading:
``Episode`` (a plan: what the conductor was asked, wrote and cost), ``VerdictRecord``
(what its best answer did, and each candidate's own verdict as a ``Leaf``), ``UndoRecord``
and ``ReviewRecord`` (the user undid a job, or rejected hunks of its fix). Each is
written and read as its fields under their own names through one converter
(``convert``); a record of a schema version this code does not know is refused
(``EpisodeFormatError``), so a reader never guesses at fields it does not understand.

Versions: 1, the first; 2 adds each candidate's own verdict (``leaves``) to outcomes;
3 writes an episode as its fields (before: the task and workers under ``inputs``, the
lane as ``by``, the bills as ``steps``, the run's end under ``result``), read still.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EpisodeFormatError
from ..plan import ROLES, ConductorCall, Lane, Plan, Step
from ..protocols import WorkerInfo
from ..storage.records import read, without, write
from ..testrun import TestRun
from ..usage import Usage

SCHEMA_VERSION = 3
KNOWN_VERSIONS = frozenset({1, 2, 3})
#: How much of why edits were refused a record keeps: a leaf's, and an outcome's.
LEAF_REFUSED_KEEP = 500
OUTCOME_REFUSED_KEEP = 2_000


def _ids(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


def _list(ids: tuple[str, ...] | None) -> list[str] | None:
    return None if ids is None else list(ids)


@dataclass(frozen=True)
class Leaf:
    """One candidate's own verdict: the step that wrote it, and what the tests said."""

    step: int
    worker: str
    applied: tuple[str, ...] = ()
    refused: str = ""
    green: bool = False
    failing_after: int | None = None


@dataclass(frozen=True)
class VerdictRecord:
    """The tests' verdict on what the plan's (best) answer did: tests failing before and
    after, edits, and with several candidates each one's own verdict in ``leaves``.
    ``id`` names the episode. Written as an "outcome" line (its name in files since
    version 1)."""

    failing_before: tuple[str, ...] | None
    failing_after: tuple[str, ...] | None
    broke: tuple[str, ...] | None = None
    applied: tuple[str, ...] = ()
    refused: str = ""
    green: bool = False
    leaves: tuple[Leaf, ...] = ()
    id: str = ""
    #: What the floor paid, or would have paid, for this plan's round (before version 3:
    #: ``alone``).
    floor_cost: float = 0.0

    @property
    def tested(self) -> bool:
        return self.failing_after is not None

    @classmethod
    def of_runs(
        cls,
        before: TestRun | None,
        after: TestRun | None,
        *,
        applied: Sequence[str] = (),
        refused: str = "",
        leaves: Sequence[Leaf] = (),
        id: str = "",
        floor_cost: float = 0.0,
    ) -> VerdictRecord:
        """The outcome of two test runs (None: not run); ``broke`` is what failed after
        that did not before, unknown when either run cannot say."""
        was = None if before is None else before.failing_ids()
        now = None if after is None else after.failing_ids()
        broke = None if was is None or now is None else tuple(sorted(set(now) - set(was)))
        return cls(
            _ids(was),
            _ids(now),
            broke,
            tuple(applied),
            refused[:OUTCOME_REFUSED_KEEP],
            bool(after is not None and after.passed),
            tuple(leaves),
            id,
            floor_cost,
        )

    def to_json(self) -> dict[str, Any]:
        return write(self, "outcome")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VerdictRecord:
        if "alone" in d:  # the key before version 3
            d = {"floor_cost": d["alone"], **{k: v for k, v in d.items() if k != "alone"}}
        return read(d, cls, f"outcome {d.get('id')!r}")


@dataclass(frozen=True)
class StepBill:
    """What one step cost."""

    worker: str
    cost: float = 0.0
    seconds: float = 0.0
    error: str = ""
    skipped: str = ""
    role: str = "generation"
    usage: Usage = Usage()


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Episode:
    """One plan: what the conductor was asked, wrote and cost, and (joined on reading)
    what came of it."""

    id: str = field(default_factory=new_id)
    version: int = SCHEMA_VERSION
    time: float = field(default_factory=time.time)
    job: str = ""
    round: int = 0
    #: Which of a round's plans this was (see ``plan.Lane``).
    lane: Lane = Lane.PLAN
    conductor: str = ""
    #: The task as the conductor saw it (``Task.brief``).
    task: str = ""
    workers: tuple[WorkerInfo, ...] = ()
    max_steps: int = 5
    #: The plan as written, with the conductor's call and its raw answer (bounded).
    plan: Plan = field(default_factory=lambda: Plan(steps=(), source=""))
    bills: tuple[StepBill, ...] = ()
    #: The job's outcome (``runtime.results.RunOutcome``) and why.
    result: str = ""
    reason: str = ""
    cost: float = 0.0
    seconds: float = 0.0
    outcome: VerdictRecord | None = None
    undone: bool = False
    #: Hunks of the job's fix the user rejected in review, with their reasons.
    rejected: tuple[str, ...] = ()

    @property
    def asked_model(self) -> bool:
        """Whether a model wrote the plan (a conductor call was made and paid for)."""
        return self.plan.call is not None

    @property
    def source(self) -> str:
        """Where the plan came from: a backend name, or ``static (fallback: why)``."""
        return self.plan.source

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.plan.steps

    @property
    def fallback(self) -> str:
        """Why the conductor's own answer was not used ('' when it was)."""
        return self.plan.error

    @property
    def shape(self) -> str:
        """Where the plan came from and its steps' workers, in order."""
        kind = "fallback" if "fallback" in self.source else self.source.split(" ")[0] or "?"
        return f"{kind}: {' > '.join(s.worker for s in self.steps) or '(none)'}"

    @property
    def green(self) -> bool:
        return bool(self.outcome and self.outcome.green and not self.undone and not self.rejected)

    def with_outcome(self, outcome: VerdictRecord) -> Episode:
        return dataclasses.replace(self, outcome=outcome)

    def to_json(self) -> dict[str, Any]:
        """The ``episode`` record, its fields under their own names; its outcome, undo and
        review are records of their own."""
        return write(self, "episode")

    @classmethod
    def from_json(
        cls,
        record: Mapping[str, Any],
        outcome: Mapping[str, Any] | None = None,
        undone: bool = False,
        rejected: tuple[str, ...] = (),
    ) -> Episode:
        version = record.get("version", 1)
        what = f"episode {record.get('id')!r}"
        if version not in KNOWN_VERSIONS:
            raise EpisodeFormatError(
                f"{what} has schema version {version!r}; this version of "
                f"conductor-lsp reads {', '.join(map(str, sorted(KNOWN_VERSIONS)))}"
            )
        episode = read(record, cls, what) if version >= 3 else _before_3(record, what)
        joined = None if outcome is None else VerdictRecord.from_json(outcome)
        return dataclasses.replace(episode, outcome=joined, undone=undone, rejected=rejected)


def _before_3(record: Mapping[str, Any], what: str) -> Episode:
    """An episode as versions 1 and 2 wrote it: the task and workers under ``inputs``, the
    lane as ``by``, the bills as ``steps``, the run's end under ``result``."""
    try:
        inputs = record.get("inputs") or {}
        plan = record.get("plan") or {}
        result = record.get("result") or {}
        fallback = str(record.get("fallback") or plan.get("error") or "")
        return Episode(
            id=str(record["id"]),
            version=int(record.get("version", 1)),
            time=float(record.get("time") or 0.0),
            job=str(record.get("job") or ""),
            round=int(record.get("round") or 0),
            lane=Lane.read(str(record.get("by") or "")),
            conductor=str(record.get("conductor") or ""),
            task=str(inputs.get("task") or ""),
            workers=tuple(WorkerInfo(**w) for w in inputs.get("workers") or ()),
            max_steps=int(inputs.get("max_steps") or 5),
            plan=_plan_before_3(plan, str(record.get("raw") or ""), fallback),
            bills=tuple(read(b, StepBill, f"{what}'s bill") for b in record.get("steps") or ()),
            result=str(result.get("outcome") or ""),
            reason=str(result.get("reason") or ""),
            cost=float(result.get("cost") or 0.0),
            seconds=float(result.get("seconds") or 0.0),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise EpisodeFormatError(f"{what} is damaged: {e}") from e


def _plan_before_3(d: Mapping[str, Any], raw: str, error: str) -> Plan:
    """A plan as versions 1 and 2 wrote it: its steps with their index, its call under
    ``conductor``, its raw answer beside it (read as written, not re-validated)."""
    call = d.get("conductor")
    return Plan(
        steps=tuple(_step_before_3(s) for s in d.get("steps") or ()),
        source=str(d.get("source") or ""),
        raw=raw,
        notes=tuple(str(n) for n in d.get("notes") or ()),
        call=read(call, ConductorCall, "the plan's call") if isinstance(call, Mapping) else None,
        error=error or str(d.get("error") or ""),
    )


def _step_before_3(d: Mapping[str, Any]) -> Step:
    access = d.get("access", "all")
    role = str(d.get("role", "generation"))
    return Step(
        str(d.get("worker", "")),
        str(d.get("subtask", "")),
        "all" if access == "all" else tuple(int(i) for i in access),
        role if role in ROLES else "generation",
    )


without(Episode, "outcome", "undone", "rejected")


@dataclass(frozen=True)
class UndoRecord:
    """The user undid the job that began at checkpoint ``job``: its plans did not help."""

    job: str
    time: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return write(self, "undo")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> UndoRecord:
        return read(d, cls, "an undo record")


@dataclass(frozen=True)
class ReviewRecord:
    """The user rejected hunks of the job's fix (``path:lines: reason`` each)."""

    job: str
    rejected: tuple[str, ...]
    time: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return write(self, "review")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ReviewRecord:
        return read(d, cls, f"review of job {d.get('job')!r}")


Record = Episode | VerdictRecord | UndoRecord | ReviewRecord
