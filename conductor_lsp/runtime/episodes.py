"""Episodes: what every plan was asked, wrote, cost and achieved, for the conductor to learn.

One JSONL file (``.conductor/episodes.jsonl``, ``[learn] record`` turns it off), append
only, so a crash loses at most the line being written. Three record types, joined by id:

- ``episode``: written when a job ends. The conductor's inputs (the task as the
  conductor saw it, the worker pool with descriptions and prices, the step limit), its
  raw output (bounded), the parsed plan or why it fell back, and per step the worker,
  tokens, $, seconds and error.
- ``outcome``: written by the fix loop (or the editor) once the answer was applied and
  tested: failing tests before and after, tests that broke, edits applied or refused,
  green (of the plan's best candidate), and ``leaves``: each candidate's own verdict
  (step, worker, applied, refused, green, failing after).
- ``undo``: the user undid a job (its start checkpoint), so its episodes did not help.
- ``review``: the user rejected hunks of a job's fix, with reasons: not a success either.

Keys never appear: records are scrubbed like traces. File contents appear only as the
task shows them, and tasks never hold files on the deny list.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..protocols import WorkerInfo
from ..secrets import Secret
from ..task import Task
from ..testrun import TestRun, clip
from .records import SCHEMA_VERSION, Episode, EpisodeFormatError
from .results import JobResult
from .state import ensure_ignored
from .trace import redact

RAW_KEEP = 4_000
_LOCKS: dict[Path, threading.Lock] = {}


def failing_ids(run: TestRun | None) -> list[str] | None:
    """The failing tests of a run, by id; None when the run cannot say (a crash, a hang)."""
    if run is None:
        return None
    if run.passed:
        return []
    if run.structured and run.failures:
        return sorted({f.test_id for f in run.failures})
    return None


class EpisodeLog:
    """Appends episode records to one file; a log for ``None`` records nothing."""

    def __init__(self, path: Path | None, secrets: Iterable[Secret] = (), root: Path | None = None):
        self.path = path
        self._secrets = list(secrets)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if root is not None:
                ensure_ignored(path.parent, root)
            self._lock = _LOCKS.setdefault(path.resolve(), threading.Lock())

    def _write(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps(redact(record, self._secrets), default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)

    def episode(
        self,
        task: Task,
        workers: Sequence[WorkerInfo],
        max_steps: int,
        conductor: str,
        result: JobResult,
        *,
        job: str = "",
        round_index: int = 0,
        by: str = "",
    ) -> str:
        """Record one job's plan and steps; returns the episode id ('' when not recording)."""
        if self.path is None:
            return ""
        episode_id = uuid.uuid4().hex
        plan = result.plan
        self._write(
            {
                "type": "episode",
                "version": SCHEMA_VERSION,
                "id": episode_id,
                "time": time.time(),
                "job": job,
                "round": round_index,
                "by": by,
                "conductor": conductor,
                "inputs": {
                    "task": task.brief(),
                    "workers": [asdict(w) for w in workers],
                    "max_steps": max_steps,
                },
                "raw": clip(plan.raw, RAW_KEEP, RAW_KEEP),
                "plan": plan.to_json(),
                "fallback": plan.error,
                "steps": [
                    {
                        "worker": r.step.worker,
                        "role": r.step.role,
                        "usage": r.usage.to_json(),
                        "cost": r.cost,
                        "seconds": round(r.elapsed, 3),
                        "error": r.error,
                        "skipped": r.skipped,
                    }
                    for r in result.steps
                ],
                "result": {
                    "outcome": result.outcome,
                    "reason": result.reason,
                    "cost": result.cost,
                    "seconds": round(result.seconds, 3),
                },
            }
        )
        return episode_id

    def outcome(
        self,
        episode_id: str,
        before: TestRun | None,
        after: TestRun | None,
        *,
        applied: Sequence[str] = (),
        refused: str = "",
        leaves: Sequence[dict[str, Any]] = (),
    ) -> None:
        """What the plan's answer did: edits applied or refused, and the tests; with
        several candidates, those of the best, and each leaf's own verdict in ``leaves``."""
        if self.path is None or not episode_id:
            return
        was, now = failing_ids(before), failing_ids(after)
        broke = None if was is None or now is None else sorted(set(now) - set(was))
        self._write(
            {
                "type": "outcome",
                "id": episode_id,
                "failing_before": was,
                "failing_after": now,
                "broke": broke,
                "applied": list(applied),
                "refused": refused[:2000],
                "green": bool(after is not None and after.passed),
                "leaves": list(leaves),
            }
        )

    def undo(self, job: str) -> None:
        """The user undid the job that began at checkpoint ``job``."""
        if job:
            self._write({"type": "undo", "job": job, "time": time.time()})

    def review(self, job: str, rejected: list[str]) -> None:
        """The user rejected hunks of the job's fix (``path:lines: reason`` each)."""
        if job and rejected:
            self._write({"type": "review", "job": job, "rejected": rejected, "time": time.time()})


def read_episodes(path: Path, skipped: list[str] | None = None) -> list[Episode]:
    """Episodes with their outcome and ``undone`` joined in, typed. Damaged lines and
    records of an unknown schema version are skipped; ``skipped`` receives why."""
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
        if kind == "episode" and isinstance(record.get("id"), str):
            records[record["id"]] = record
        elif kind == "outcome" and record.get("id") in records:
            outcomes[record["id"]] = record
        elif kind == "undo" and isinstance(record.get("job"), str):
            undone.add(record["job"])
        elif kind == "review" and isinstance(record.get("job"), str):
            why = record.get("rejected")
            if isinstance(why, list):
                rejected.setdefault(record["job"], []).extend(str(w) for w in why)
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
