"""What the user kept of a fix, hunk by hunk, and how a rejection's reasons reach the next
try. Front ends (the terminal, the editor) supply a ``Reviewer``; the loop only calls it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..edits.hunks import Hunk
from .report import FixReport


@dataclass(frozen=True)
class Review:
    """The accepted hunks' indices, a reason for each rejected hunk that has one, and
    whether the user wants another try with those reasons."""

    accepted: frozenset[int]
    reasons: Mapping[int, str] = field(default_factory=dict)
    again: bool = False


#: Shows the fix's hunks to the user and returns what they accepted. It raises
#: ``ConductorError`` when the review itself failed (the fix is then kept, not written).
Reviewer = Callable[[Sequence[Hunk]], Awaitable[Review]]


def retry_instruction(instruction: str, rejected: Sequence[str]) -> str:
    """The next try's instruction: the first one, and what the user rejected and why."""
    lines = "\n".join(f"- {r}" for r in rejected)
    return (
        f"{instruction.strip()}\n\nThe user reviewed the previous fix and rejected these "
        f"changes (file:lines: their reason); do not make them again:\n{lines}"
    )


async def fix_until_kept(
    run: Callable[[str], Awaitable[FixReport]],
    instruction: str,
    again: Callable[[FixReport], Awaitable[bool]],
) -> FixReport:
    """Run the fix (``run``, given the instruction) and, while the user rejected hunks and
    wants another try (``again``: the terminal asks, the editor's review said so), run
    it again told what they rejected and why; the last report."""
    while True:
        report = await run(instruction)
        if not (report.rejected and await again(report)):
            return report
        instruction = retry_instruction(instruction, report.rejected)
