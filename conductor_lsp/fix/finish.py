"""The end of a fix job: the one write to the user's files, or a checkpoint instead.

The best verified state is written when it beats the start, all files or none, and
only if none of them changed since the job began (on disk, or in an unsaved buffer
the editor reports as ``busy``): a file the user edited meanwhile is never
overwritten. Then the fix is kept in a checkpoint that ``undo --ref`` applies, as it
is when the job was cancelled. What is reported written is read back from disk.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..checkpoints import store as cp
from ..edits.hunks import apply_hunks, hunks_of
from ..edits.paths import check_path
from ..edits.workspace import replace_files
from ..errors import ConductorError, EditError
from .candidates import State
from .report import FixReport
from .review import Reviewer
from .stops import FixOutcome


def files_diff(before: Mapping[str, bytes | None], after: Mapping[str, bytes]) -> str:
    """A unified diff of changed files (text files; others named only)."""
    out: list[str] = []
    for rel in sorted(after):
        old, new = before.get(rel), after[rel]
        try:
            a = old.decode("utf-8").splitlines(keepends=True) if old is not None else []
            b = new.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            out.append(f"Binary or non-UTF-8 file {rel} changed\n")
            continue
        origin = f"a/{rel}" if old is not None else "/dev/null"
        out += difflib.unified_diff(a, b, origin, f"b/{rel}")
    return "".join(out)


def changed_since(root: Path, rel: str, before: bytes | None, busy: Callable[[str], bool]) -> bool:
    """Whether ``rel`` no longer holds ``before`` (None: absent), or has unsaved changes in
    an editor; a file that cannot be read counts as changed."""
    try:
        now: bytes | None = (root / rel).read_bytes()
    except FileNotFoundError:
        now = None
    except OSError:
        return True
    return now != before or busy(rel)


def write_verified(root: Path, files: Mapping[str, bytes | None], deny: Sequence[str]) -> list[str]:
    """All files or none, inside the workspace (None: remove the file); then each read
    back from disk."""
    paths = {check_path(root, rel, deny): rel for rel in files}
    replace_files({path: data for path, rel in paths.items() if (data := files[rel]) is not None})
    for path, rel in paths.items():
        if files[rel] is None:
            path.unlink(missing_ok=True)
    missing = [
        rel
        for path, rel in paths.items()
        if (path.read_bytes() if path.is_file() else None) != files[rel]
    ]
    if missing:
        raise EditError(f"{', '.join(missing)} did not hold the fix after the write")
    return sorted(files)


class Finisher:
    def __init__(
        self,
        root: Path,
        start: cp.Checkpoint,
        deny: Sequence[str],
        busy: Callable[[str], bool],
        note: Callable[[int, str], None],
        review: Reviewer | None = None,
    ) -> None:
        self.root = root.resolve()
        self.start = start
        self.deny = deny
        self.busy = busy
        self.note = note
        self.review = review

    async def _reviewed(
        self,
        review: Reviewer,
        report: FixReport,
        before: Mapping[str, bytes | None],
        files: Mapping[str, bytes],
    ) -> dict[str, bytes]:
        """The files with only the hunks the user accepted (text files; a binary one is
        all or nothing with the rest); fills ``report.rejected``."""
        try:
            old = {r: None if b is None else b.decode("utf-8") for r, b in before.items()}
            new = {r: b.decode("utf-8") for r, b in files.items()}
        except UnicodeDecodeError:
            return dict(files)
        hunks = hunks_of(old, new)
        if not hunks:
            return dict(files)
        kept = await review(hunks)
        report.again = kept.again
        report.rejected = [
            f"{h.label}: {kept.reasons.get(h.index, '').strip() or '(no reason given)'}"
            for h in hunks
            if h.index not in kept.accepted
        ]
        out: dict[str, bytes] = {}
        for rel in sorted(new):
            mine = [h for h in hunks if h.path == rel]
            if any(h.index in kept.accepted for h in mine):
                text = apply_hunks(old[rel], mine, kept.accepted)
                out[rel] = text.encode("utf-8")
        if report.rejected:
            self.note(0, f"rejected in review: {'; '.join(report.rejected)}")
        if out and report.rejected:
            self.note(0, "the accepted hunks are written as they are, not tested without the rest")
        return out

    async def finish(self, report: FixReport, best: State, *, write: bool) -> None:
        """Write ``best`` (or keep it) and fill the report's end, written, kept and diff."""
        report.end = report.start
        if not best.files or not best.beats(State({}, report.start)):
            if not report.start.passed:
                self.note(0, "no state beat the start: the workspace is unchanged")
            return
        before = {
            rel: await asyncio.to_thread(cp.read_file, self.start, rel, self.root)
            for rel in best.files
        }
        report.diff = files_diff(before, best.files)
        report.best = best.label
        changed = [rel for rel in sorted(best.files) if self._changed(rel, before[rel])]
        why = "the job was cancelled" if not write else ""
        if changed:
            why = f"changed during the job: {', '.join(changed)}"
        files: Mapping[str, bytes] = best.files
        if not why and self.review is not None:
            try:
                files = await self._reviewed(self.review, report, before, best.files)
            except ConductorError as e:
                why, files = f"the review failed: {e}", {}
            if not files and not why:
                self.note(0, "every hunk was rejected: the workspace is unchanged")
                if report.outcome is FixOutcome.GREEN:
                    report.outcome = FixOutcome.FAILED
                report.reason = "rejected in review"
                return
        if not why:
            try:
                report.written = await asyncio.to_thread(self._write, files)
            except (EditError, OSError) as e:
                why = f"the write failed, nothing was written: {e}"
        if why:
            await self._keep(report, best, why)
            return
        if not report.rejected:
            report.end = best.run
        self.note(0, f"wrote {', '.join(report.written)} ({best.label})")
        report.end_checkpoint = await asyncio.to_thread(
            cp.create, self.root, f"{cp.JOB_END}: {report.outcome}"
        )

    def _changed(self, rel: str, before: bytes | None) -> bool:
        return changed_since(self.root, rel, before, self.busy)

    def _write(self, files: Mapping[str, bytes]) -> list[str]:
        return write_verified(self.root, files, self.deny)

    async def _keep(self, report: FixReport, best: State, why: str) -> None:
        label = f"{cp.JOB_KEPT} ({best.run.state()})"
        kept = await asyncio.to_thread(
            cp.create_with, self.root, self.start, dict(best.files), label
        )
        report.kept = kept.ref
        report.reason = (
            f"the verified fix ({best.run.state()}) was not written ({why}); it is kept as "
            f"{kept.ref}: `conductor-lsp undo --ref {kept.ref}` applies it (your current "
            "state is saved first)"
        )
        if report.outcome is FixOutcome.GREEN:
            report.outcome = FixOutcome.FAILED
        self.note(0, report.reason)
