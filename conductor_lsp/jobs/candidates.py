"""A fix's other candidates: list them, or write one of them instead of the job's choice."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from ..fix.pick import Picked, Shown, pick, show
from ..fix.report import FixReport
from ..runtime.session import Session


async def list_candidates(root: Path, report: FixReport) -> list[Shown]:
    """Every candidate of the fix, in the order they were made, with what it changed."""
    return await asyncio.to_thread(show, root, report)


async def apply_candidate(
    session: Session,
    report: FixReport,
    index: int,
    busy: Callable[[str], bool] = lambda rel: False,
) -> Picked:
    """Write candidate ``index``'s verified state over what the fix left, with a checkpoint
    before it; never over a file changed since (``EditError`` says which). The fix's own
    choice was not what the user wanted: its episode learns so."""
    config = session.config
    picked = await asyncio.to_thread(
        pick, config.root, report, index, config.edits.all_deny(), busy
    )
    session.episodes.review(
        report.checkpoint.ref, [f"the user applied {picked.candidate.label} instead"]
    )
    return picked
