"""``fix --review``: the verified fix hunk by hunk, as ``git add -p`` asks, with a reason
for each rejection; the reasons can go into a second try."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from rich.console import Console

from ..edits.hunks import Hunk
from ..jobs import Review, Reviewer

HELP = (
    "y - apply this hunk\nn - do not apply it\nr - do not apply it, and say why (the reason "
    "goes into the next try and teaches the conductor)\na - apply this and every later "
    "hunk\nq - apply none of this and the later hunks\n"
)


def terminal_reviewer(console: Console, ask: Callable[[str], str] = input) -> Reviewer:
    """Asks about each hunk on the terminal (or whatever ``ask`` reads)."""

    async def review(hunks: Sequence[Hunk]) -> Review:
        accepted: set[int] = set()
        reasons: dict[int, str] = {}
        rest: bool | None = None
        for n, h in enumerate(hunks, 1):
            if rest is not None:
                if rest:
                    accepted.add(h.index)
                continue
            console.print(h.diff(), markup=False, highlight=False, end="")
            while True:
                try:
                    answer = await asyncio.to_thread(
                        ask, f"Apply this hunk ({n}/{len(hunks)}) [y,n,r,a,q,?]? "
                    )
                except EOFError:
                    answer = "q"
                answer = answer.strip().lower()[:1]
                if answer in ("y", "a"):
                    accepted.add(h.index)
                    rest = True if answer == "a" else None
                elif answer == "r":
                    try:
                        reasons[h.index] = (await asyncio.to_thread(ask, "Why not? ")).strip()
                    except EOFError:
                        pass
                elif answer == "q":
                    rest = False
                elif answer != "n":
                    console.print(HELP, markup=False, highlight=False, end="")
                    continue
                break
        return Review(frozenset(accepted), reasons)

    return review
