"""What a model is shown: the files a task involves, the repository's outline, what the
failures point at, the part of a file and of everything else that fits a worker's window,
and the one task a fix round shows (the live round, ``eval`` and the GRPO rollout alike)."""

from .budget import Fitted, WindowError, fit, fit_window
from .files import context_files, is_test_path, named_files
from .focus import Focus, focus
from .repo_map import RepoMap, repo_map, with_outline
from .rounds import DEFAULT_INSTRUCTION, fix_instruction, round_task
from .window import fit_task

__all__ = [
    "DEFAULT_INSTRUCTION",
    "Fitted",
    "Focus",
    "RepoMap",
    "WindowError",
    "context_files",
    "fit",
    "fit_task",
    "fit_window",
    "fix_instruction",
    "focus",
    "is_test_path",
    "named_files",
    "repo_map",
    "round_task",
    "with_outline",
]
