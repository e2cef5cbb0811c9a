"""Episodes as typed records: what the readers (``episodes``, the summary, training, the
reward, the routing policy) may rely on, checked once where the JSON is read.

``Episode.from_json`` takes an episode record with its outcome record (or None) and
whether its job was undone; it refuses a record of a schema version it does not know
(``EpisodeFormatError``), so a reader never guesses at fields it does not understand.

Versions: 1, the first; 2 adds each candidate's own verdict (``leaves``) to outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConductorError
from ..protocols import WorkerInfo

SCHEMA_VERSION = 2
KNOWN_VERSIONS = frozenset({1, 2})


class EpisodeFormatError(ConductorError):
    """An episode record this version cannot read (a newer schema, or damage)."""


def _ids(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


@dataclass(frozen=True)
class Leaf:
    """One candidate's own verdict: the step that wrote it, and what the tests said."""

    step: int
    worker: str
    applied: tuple[str, ...] = ()
    refused: str = ""
    green: bool = False
    failing_after: int | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Leaf:
        return cls(
            int(d.get("step", 0)),
            str(d.get("worker", "")),
            tuple(d.get("applied") or ()),
            str(d.get("refused") or ""),
            bool(d.get("green")),
            None if d.get("failing_after") is None else int(d["failing_after"]),
        )


@dataclass(frozen=True)
class Outcome:
    """What the plan's (best) answer did: tests failing before and after, edits."""

    failing_before: tuple[str, ...] | None
    failing_after: tuple[str, ...] | None
    broke: tuple[str, ...] | None = None
    applied: tuple[str, ...] = ()
    refused: str = ""
    green: bool = False
    leaves: tuple[Leaf, ...] = ()

    @property
    def tested(self) -> bool:
        return self.failing_after is not None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Outcome:
        return cls(
            _ids(d.get("failing_before")),
            _ids(d.get("failing_after")),
            _ids(d.get("broke")),
            tuple(d.get("applied") or ()),
            str(d.get("refused") or ""),
            bool(d.get("green")),
            tuple(Leaf.from_json(x) for x in d.get("leaves") or () if isinstance(x, Mapping)),
        )


@dataclass(frozen=True)
class PlannedStep:
    worker: str
    subtask: str = ""
    role: str = "generation"
    access: str | tuple[int, ...] = "all"


@dataclass(frozen=True)
class StepBill:
    """What one step cost."""

    worker: str
    cost: float = 0.0
    seconds: float = 0.0
    error: str = ""
    skipped: str = ""


@dataclass(frozen=True)
class Episode:
    """One plan: what the conductor was asked, wrote and cost, and what came of it."""

    id: str
    version: int = SCHEMA_VERSION
    time: float = 0.0
    job: str = ""
    round: int = 0
    by: str = ""
    conductor: str = ""
    #: The task as the conductor saw it (``Task.brief``).
    task: str = ""
    workers: tuple[WorkerInfo, ...] = ()
    max_steps: int = 5
    raw: str = ""
    #: Where the plan came from: a backend name, or ``static (fallback: why)``.
    source: str = ""
    steps: tuple[PlannedStep, ...] = ()
    #: Whether a model wrote the plan (a conductor call was made and paid for).
    asked_model: bool = False
    #: Why the conductor's own answer was not used ('' when it was).
    fallback: str = ""
    bills: tuple[StepBill, ...] = ()
    cost: float = 0.0
    seconds: float = 0.0
    outcome: Outcome | None = None
    undone: bool = False
    #: Hunks of the job's fix the user rejected in review, with their reasons.
    rejected: tuple[str, ...] = ()

    @property
    def shape(self) -> str:
        """Where the plan came from and its steps' workers, in order."""
        kind = "fallback" if "fallback" in self.source else self.source.split(" ")[0] or "?"
        return f"{kind}: {' > '.join(s.worker for s in self.steps) or '(none)'}"

    @property
    def green(self) -> bool:
        return bool(self.outcome and self.outcome.green and not self.undone and not self.rejected)

    @classmethod
    def from_json(
        cls,
        record: Mapping[str, Any],
        outcome: Mapping[str, Any] | None = None,
        undone: bool = False,
        rejected: tuple[str, ...] = (),
    ) -> Episode:
        version = record.get("version", 1)
        if version not in KNOWN_VERSIONS:
            raise EpisodeFormatError(
                f"episode {record.get('id')!r} has schema version {version!r}; this version of "
                f"conductor-lsp reads {', '.join(map(str, sorted(KNOWN_VERSIONS)))}"
            )
        try:
            inputs = record.get("inputs") or {}
            plan = record.get("plan") or {}
            result = record.get("result") or {}
            return cls(
                id=str(record["id"]),
                version=int(version),
                time=float(record.get("time") or 0.0),
                job=str(record.get("job") or ""),
                round=int(record.get("round") or 0),
                by=str(record.get("by") or ""),
                conductor=str(record.get("conductor") or ""),
                task=str(inputs.get("task") or ""),
                workers=tuple(WorkerInfo(**w) for w in inputs.get("workers") or ()),
                max_steps=int(inputs.get("max_steps") or 5),
                raw=str(record.get("raw") or ""),
                source=str(plan.get("source") or ""),
                steps=tuple(_planned(s) for s in plan.get("steps") or ()),
                asked_model=bool(plan.get("conductor")),
                fallback=str(record.get("fallback") or ""),
                bills=tuple(_bill(s) for s in record.get("steps") or ()),
                cost=float(result.get("cost") or 0.0),
                seconds=float(result.get("seconds") or 0.0),
                outcome=None if outcome is None else Outcome.from_json(outcome),
                undone=undone,
                rejected=rejected,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise EpisodeFormatError(f"episode {record.get('id')!r} is damaged: {e}") from e


def _planned(s: Mapping[str, Any]) -> PlannedStep:
    access = s.get("access", "all")
    return PlannedStep(
        str(s.get("worker", "")),
        str(s.get("subtask", "")),
        str(s.get("role", "generation")),
        "all" if access == "all" else tuple(int(i) for i in access),
    )


def _bill(s: Mapping[str, Any]) -> StepBill:
    return StepBill(
        str(s.get("worker", "")),
        float(s.get("cost") or 0.0),
        float(s.get("seconds") or 0.0),
        str(s.get("error") or ""),
        str(s.get("skipped") or ""),
    )
