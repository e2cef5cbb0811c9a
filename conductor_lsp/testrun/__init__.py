"""Running the workspace's tests: one process group with a timeout, and what its report says.

For pytest the failures are read from a junit report; the output models see is steady
(no timings, no addresses), so the same failure reads the same on every run.
"""

from .confine import Confinement
from .process import is_pytest, run_tests
from .result import (
    HEAD_CHARS,
    TAIL_CHARS,
    UNKNOWN_FAILURES,
    TestFailure,
    TestRun,
    clip,
    steady,
)
from .walls import Walls, probe

__all__ = [
    "HEAD_CHARS",
    "TAIL_CHARS",
    "UNKNOWN_FAILURES",
    "Confinement",
    "TestFailure",
    "TestRun",
    "Walls",
    "clip",
    "is_pytest",
    "probe",
    "run_tests",
    "steady",
]
