"""The episodes file: one JSONL file (``.conductor/episodes.jsonl``; ``[learn] record``
turns it off), append only, so a crash loses at most the line being written.

Records (``records``) are written through their ``to_json`` and read through their
``from_json``: an episode when a job ends, its outcome once its answers were tested, an
undo or a review when the user takes a fix back. Keys never appear: records are scrubbed
like traces. File contents appear only as the task shows them, and tasks never hold
files on the deny list.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import EpisodeFormatError
from ..secrets import Secret, redact
from ..storage.state import ensure_ignored
from .records import Episode, Record, ReviewRecord, UndoRecord, VerdictRecord

_LOCKS: dict[Path, threading.Lock] = {}


class EpisodeLog:
    """Appends records to one file; a log for ``None`` records nothing."""

    def __init__(self, path: Path | None, secrets: Iterable[Secret] = (), root: Path | None = None):
        self.path = path
        self._secrets = list(secrets)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if root is not None:
                ensure_ignored(path.parent, root)
            self._lock = _LOCKS.setdefault(path.resolve(), threading.Lock())

    @property
    def recording(self) -> bool:
        return self.path is not None

    def write(self, record: Record) -> None:
        if self.path is None:
            return
        line = json.dumps(redact(record.to_json(), self._secrets), default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)

    def episode(self, record: Episode) -> str:
        """Record one job's plan and steps; its id ('' when not recording)."""
        if self.path is None:
            return ""
        self.write(record)
        return record.id

    def outcome(self, record: VerdictRecord) -> None:
        """What the plan's answers did (``record.id`` names the episode; '' records nothing)."""
        if record.id:
            self.write(record)

    def undo(self, job: str) -> None:
        """The user undid the job that began at checkpoint ``job``."""
        if job:
            self.write(UndoRecord(job))

    def review(self, job: str, rejected: list[str]) -> None:
        """The user rejected hunks of the job's fix (``path:lines: reason`` each)."""
        if job and rejected:
            self.write(ReviewRecord(job, tuple(rejected)))


def read_episodes(path: Path, skipped: list[str] | None = None) -> list[Episode]:
    """Episodes with their outcome, ``undone`` and review joined in, typed. Damaged lines
    and records of an unknown schema version are skipped; ``skipped`` receives why."""
    records: dict[str, dict[str, Any]] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    undone: set[str] = set()
    rejected: dict[str, list[str]] = {}
    if not path.is_file():
        return []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        try:
            if kind == "episode" and isinstance(record.get("id"), str):
                records[record["id"]] = record
            elif kind == "outcome" and record.get("id") in records:
                outcomes[record["id"]] = record
            elif kind == "undo" and isinstance(record.get("job"), str):
                undone.add(UndoRecord.from_json(record).job)
            elif kind == "review" and isinstance(record.get("job"), str):
                review = ReviewRecord.from_json(record)
                rejected.setdefault(review.job, []).extend(review.rejected)
        except (EpisodeFormatError, KeyError, TypeError, ValueError):
            continue
    out = []
    for key, record in records.items():
        job = record.get("job")
        try:
            out.append(
                Episode.from_json(
                    record,
                    outcomes.get(key),
                    bool(job) and job in undone,
                    tuple(rejected.get(job, ())) if job else (),
                )
            )
        except EpisodeFormatError as e:
            if skipped is not None:
                skipped.append(str(e))
    return out
