"""The pure edits API: (file texts, worker output) -> (new texts | errors), no I/O.

The CLI and the fix loop write the result to disk (``edits.workspace``), the
language server turns it into a WorkspaceEdit, and the benchmarks call it directly.
"""

from .apply import apply_edits, apply_output, edited_paths
from .model import (
    FUZZY_THRESHOLD,
    NO_EDIT,
    EditFailure,
    EditResult,
    EditsConfig,
    FileEdit,
    no_edit,
)
from .parse import parse_edits
from .paths import DEFAULT_DENY, check_path, denied_by, normalize

__all__ = [
    "DEFAULT_DENY",
    "FUZZY_THRESHOLD",
    "NO_EDIT",
    "EditFailure",
    "EditResult",
    "EditsConfig",
    "FileEdit",
    "apply_edits",
    "apply_output",
    "check_path",
    "denied_by",
    "edited_paths",
    "no_edit",
    "normalize",
    "parse_edits",
]
