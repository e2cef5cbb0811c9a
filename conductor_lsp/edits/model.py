"""Edit values: what a worker proposed, and what applying it gave."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from .paths import DEFAULT_DENY

#: replace: a SEARCH/REPLACE block; diff: a unified-diff hunk; whole: a file after its path;
#: block: a fenced block with no path (only the single file under repair may take it).
EditKind = Literal["replace", "diff", "whole", "block"]
#: How similar a fuzzy SEARCH match must be; the one place this default lives.
FUZZY_THRESHOLD = 0.85
#: How a verdict, a report and a reviewer's prompt name an answer none of whose edits
#: applied (nothing was tested): one wording wherever it is said.
NO_EDIT = "no edit applied"


def no_edit(errors: str) -> str:
    """One line for an answer none of whose edits applied: ``NO_EDIT`` and the first
    reason given (a verdict and the editor's report say the same; the reviewer's prompt
    is given every reason)."""
    first = next((line.strip() for line in errors.splitlines() if line.strip()), "")
    return f"{NO_EDIT}: {first or 'the answer held no edit'}"


@dataclass
class EditsConfig:
    """The ``[edits]`` section: what every caller of the edits API passes along."""

    deny: list[str] = field(default_factory=list)
    """Extra glob patterns never edited nor shown to models (added to the built-in list)."""
    fuzzy_threshold: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = FUZZY_THRESHOLD
    """Similarity (0-1) a fuzzy SEARCH match needs; it must also be the only such place."""

    def all_deny(self) -> list[str]:
        return [*DEFAULT_DENY, *self.deny]


@dataclass(frozen=True)
class FileEdit:
    """One proposed change to one file, before it is matched against the file."""

    path: str
    kind: EditKind
    search: str = ""
    replace: str = ""
    #: For diff hunks: the 1-based line the hunk says it starts at (a tie-breaker only).
    hint_line: int = 0
    #: Where in the worker output this edit began (1-based), for error messages.
    source_line: int = 0


@dataclass(frozen=True)
class EditFailure:
    path: str
    message: str
    source_line: int = 0

    def __str__(self) -> str:
        where = f" (output line {self.source_line})" if self.source_line else ""
        return f"{self.path}{where}: {self.message}"


@dataclass
class EditResult:
    """New texts for changed files, or the reasons nothing may be applied: never both.

    ``new_texts`` and ``created`` read as empty once any failure is recorded, whatever the
    order things were added in, so no caller can apply half an answer."""

    proposed: dict[str, str] = field(default_factory=dict)
    proposed_new: set[str] = field(default_factory=set)
    failures: list[EditFailure] = field(default_factory=list)
    #: How each applied edit matched: exact, whitespace, indent, fuzzy(0.93)...
    matches: list[str] = field(default_factory=list)
    #: What was read generously, said plainly ("did you mean calc.py?").
    notes: list[str] = field(default_factory=list)

    @property
    def new_texts(self) -> dict[str, str]:
        """path -> new text, for every file the answer changes (empty on any failure)."""
        return {} if self.failures else dict(self.proposed)

    @property
    def created(self) -> set[str]:
        """The new files among ``new_texts`` (empty on any failure)."""
        return set() if self.failures else set(self.proposed_new)

    @property
    def ok(self) -> bool:
        return not self.failures and bool(self.proposed)

    def report(self) -> str:
        """Failures as text for the next step or iteration."""
        return "\n".join(str(f) for f in self.failures)
