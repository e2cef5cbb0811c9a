"""Show Candidates: the last fix job's candidates (worker, verdict, cost, diff) and applying
another one in place of the one the job chose: stale-safe, all or nothing, undoable."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from lsprotocol import types

from ..errors import ConductorError
from ..jobs import apply_candidate as write_candidate
from ..jobs import list_candidates
from .app import ConductorServer
from .arguments import CandidateArgs, JobArgs, camel
from .job_bodies import CheckpointUndo, buffers_follow_disk, dirty_buffers, finish
from .job_table import WHOLE_WORKSPACE, Progress, ServerJob


def _fix_job(ls: ConductorServer, job_id: str | None) -> ServerJob | None:
    jobs = [j for j in ls.jobs.jobs.values() if j.fix is not None]
    if job_id is not None:
        jobs = [j for j in jobs if j.id == job_id]
    return jobs[-1] if jobs else None


async def show_candidates(ls: ConductorServer, args: JobArgs | None = None) -> dict[str, Any]:
    """The candidates as data; each client lists them its own way (a quick pick, a menu)."""
    job = _fix_job(ls, args.job_id if args else None)
    if job is None or job.fix is None:
        ls.show("Conductor: no finished fix job with candidates yet")
        return {"jobId": None, "candidates": []}
    shown = await list_candidates(ls.current_config()[0].root, job.fix)
    return {
        "jobId": job.id,
        "candidates": [{camel(k): v for k, v in dataclasses.asdict(s).items()} for s in shown],
    }


def apply_candidate(ls: ConductorServer, args: CandidateArgs | None = None) -> dict[str, Any]:
    if args is None:
        return {"started": False, "reason": "index (an integer) is required"}
    target = _fix_job(ls, args.job_id)
    if target is None:
        msg = "Conductor: no finished fix job with candidates"
        ls.show(msg, types.MessageType.Warning)
        return {"started": False, "reason": msg}
    return ls.start(
        "applyCandidate",
        f"Conductor: apply candidate {args.index}",
        frozenset({WHOLE_WORKSPACE}),
        lambda job: _apply_job(ls, job, target, args.index),
    )


async def _apply_job(ls: ConductorServer, job: ServerJob, target: ServerJob, index: int) -> None:
    job.progress = await Progress.create(ls, job.id)
    job.progress.begin(job.title)
    config, _ = ls.current_config()
    root = config.root
    report = target.fix
    assert report is not None
    dirty = set(dirty_buffers(ls, root))
    try:
        async with buffers_follow_disk(ls, root, job.title):
            session = await asyncio.to_thread(ls.session)
            picked = await write_candidate(session, report, index, lambda rel: rel in dirty)
    except ConductorError as e:
        finish(ls, job, "failed", str(e), error=True)
        return
    job.undo = CheckpointUndo(ls, picked.start.ref)
    finish(
        ls,
        job,
        "done",
        f"applied candidate {index} ({picked.candidate.label}): {', '.join(picked.written)}",
    )
