"""Fix and test: the loop, its candidates and sandboxes, what it shows the conductor, and
checkpoints."""

from ..checkpoints.store import Checkpoint
from .candidates import Candidate, Round, State, Verdict
from .loop import DEFAULT_INSTRUCTION, FixLoop, FixReport

__all__ = [
    "DEFAULT_INSTRUCTION",
    "Candidate",
    "Checkpoint",
    "FixLoop",
    "FixReport",
    "Round",
    "State",
    "Verdict",
]
