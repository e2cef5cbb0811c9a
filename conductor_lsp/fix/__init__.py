"""Fix and test: the loop, what it shows the conductor, and checkpoints."""

from .checkpoint import Checkpoint
from .loop import DEFAULT_INSTRUCTION, FixLoop, FixReport, Iteration

__all__ = ["DEFAULT_INSTRUCTION", "Checkpoint", "FixLoop", "FixReport", "Iteration"]
