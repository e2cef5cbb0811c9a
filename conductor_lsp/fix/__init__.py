"""Fix and test: the loop, its rounds, candidates and sandboxes, what it shows the
conductor, and the one write at the end.

``review`` is the fix loop's ``Reviewer``; the terminal (``cli.review``) and the editor
(``server.review``) implement it under the same name.
"""

from ..checkpoints.store import Checkpoint
from ..context.rounds import DEFAULT_INSTRUCTION
from .candidates import Candidate, Round, State, Verdict
from .loop import FixLoop, FixReport

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
