"""A task: what the user asked for, with the context the editor or CLI gathered."""

from __future__ import annotations

from dataclasses import dataclass

#: Most characters of one file shown to a model (the fix loop skips bigger files).
MAX_FILE_CHARS = 60_000


@dataclass(frozen=True)
class FileContext:
    path: str
    text: str
    #: 1-based inclusive line range the user selected, if any.
    selection: tuple[int, int] | None = None
    #: False for files shown only as context (the tests a fix job must make pass).
    editable: bool = True


@dataclass(frozen=True)
class Task:
    instruction: str
    files: tuple[FileContext, ...] = ()
    diagnostics: tuple[str, ...] = ()
    test_failures: str = ""
    #: The previous round's plan and outcome, so a corrective plan can learn from it.
    previous: str = ""

    def editable(self) -> list[str]:
        """The paths of the files this task may change."""
        return [f.path for f in self.files if f.editable]

    def render(self, *, max_file_chars: int = MAX_FILE_CHARS) -> str:
        """Task and context as Markdown; identical for every step so prompt caches hit."""
        parts = [f"## Task\n{self.instruction.strip()}"]
        for f in self.files:
            text = f.text
            if len(text) > max_file_chars:
                text = text[:max_file_chars] + "\n... [truncated]\n"
            header = f"## File `{f.path}`"
            if f.selection:
                header += f" (selected lines {f.selection[0]}-{f.selection[1]})"
            if not f.editable:
                header += " (read only)"
            parts.append(f"{header}\n```\n{text.rstrip()}\n```")
        if self.diagnostics:
            parts.append("## Diagnostics\n" + "\n".join(f"- {d}" for d in self.diagnostics))
        if self.test_failures:
            parts.append(f"## Failing tests\n{self.test_failures.strip()}")
        if self.previous:
            parts.append(f"## Previous attempt\n{self.previous.strip()}")
        return "\n\n".join(parts)
