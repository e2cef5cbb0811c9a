"""Fix a repository until its tests pass: ``fix_repository``."""

from __future__ import annotations

from dataclasses import dataclass

from ..context.rounds import fix_instruction
from ..fix.loop import FixLoop
from ..fix.report import FixReport
from ..fix.review import fix_until_kept
from ..runtime.session import Session
from .hooks import QUIET, Hooks, model_notes


@dataclass(frozen=True)
class FixRequest:
    #: What to do besides making the failing tests pass ('' for that alone).
    instruction: str = ""


async def fix_repository(
    session: Session, request: FixRequest = FixRequest(), hooks: Hooks = QUIET
) -> FixReport:
    """The fix loop on the session's workspace: candidates judged in sandboxes, the best
    verified state written once with a checkpoint before it; while the user rejected
    hunks in review and wants another try, again with their reasons. The last report."""

    async def once(instruction: str) -> FixReport:
        async with hooks.attempt():
            loop = FixLoop(
                session,
                instruction=instruction,
                on_event=hooks.on_event,
                on_tests=hooks.on_tests,
                busy=hooks.busy,
                review=hooks.review,
            )
            report = await loop.run()
        hooks.on_report(report)
        return report

    with model_notes(hooks.on_event):
        return await fix_until_kept(once, fix_instruction(request.instruction), hooks.again)
