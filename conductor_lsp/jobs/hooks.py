"""What a door lends a job: where its events go, who reviews, which files are busy.

A job never asks the user anything itself; each door answers through these hooks in
its own way (the terminal prints and asks, the editor reports progress and shows a
review, the MCP door reports to the agent, eval and learn pass nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

from ..fix.report import FixReport
from ..fix.review import Reviewer
from ..models import stats
from ..runtime.events import EventSink, ModelNote, ignore
from ..testrun import TestRun


async def _no(report: FixReport) -> bool:
    return False


@contextlib.asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


@dataclass(frozen=True)
class Hooks:
    #: Every event of the job (plans, steps, candidates, notes), as it happens.
    on_event: EventSink = ignore
    #: Shows the final fix's hunks; only those accepted are written (None: write all).
    review: Reviewer | None = None
    #: Whether the user is editing a workspace-relative file right now (an unsaved buffer).
    busy: Callable[[str], bool] = lambda rel: False
    #: The workspace's own test runs (the start and the end), as they finish.
    on_tests: Callable[[TestRun], None] = lambda run: None
    #: After a fix whose hunks were rejected with reasons: try again, told them?
    again: Callable[[FixReport], Awaitable[bool]] = _no
    #: Around each attempt of a fix (the first and each retry): the editor refreshes
    #: the buffers the attempt changed on disk when it ends.
    attempt: Callable[[], contextlib.AbstractAsyncContextManager[None]] = _nothing
    #: Each attempt's report as it ends (the terminal prints it).
    on_report: Callable[[FixReport], None] = lambda report: None


#: No hooks: events dropped, nothing reviewed, nothing busy.
QUIET = Hooks()


@contextlib.contextmanager
def model_notes(on_event: EventSink) -> Iterator[None]:
    """While a job runs, its in-process models' loads as events on its own sink; a load
    runs in a worker thread, so its note is handed to the job's event loop."""
    loop = asyncio.get_running_loop()
    home = threading.get_ident()

    def note(line: str) -> None:
        if threading.get_ident() == home:
            on_event(ModelNote(line))
        else:
            loop.call_soon_threadsafe(on_event, ModelNote(line))

    with stats.listen(note):
        yield


def model_report() -> list[str]:
    """How each in-process model loaded and decoded in this process (none: nothing)."""
    return stats.report()
