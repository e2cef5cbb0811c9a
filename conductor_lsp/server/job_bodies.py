"""What each server job does (its body). Handlers only start these; ``job_table`` runs them."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from ..edits import no_edit
from ..edits.workspace import read_text
from ..errors import ConductorError, EditError
from ..jobs import (
    Applied,
    EditKind,
    EditRequest,
    FixReport,
    FixRequest,
    Hooks,
    RunOutcome,
    edit_buffer,
    fix_repository,
    outcome_text,
    undo,
)
from ..testrun import TestRun
from .app import ConductorServer
from .editor_edits import apply_in_editor, open_documents, replace_buffers
from .job_table import Progress, ServerJob
from .markdown import job_report
from .positions import offset_at
from .review import editor_reviewer


def edit_request(
    ls: ConductorServer,
    kind: EditKind,
    uri: str,
    rng: types.Range | None,
    instruction: str,
    diagnostics: list[str],
) -> EditRequest:
    """The buffer as the editor holds it, the range's lines and the selected text."""
    doc = ls.workspace.get_text_document(uri)
    lines, selected = None, ""
    if rng is not None:
        enc = str(ls.workspace.position_encoding or "utf-16")
        a, b = offset_at(doc.source, rng.start, enc), offset_at(doc.source, rng.end, enc)
        lines, selected = (rng.start.line + 1, rng.end.line + 1), doc.source[a:b]
    return EditRequest(
        kind,
        Path(doc.path),
        doc.source,
        instruction,
        lines=lines,
        selected=selected,
        diagnostics=tuple(diagnostics),
        episode_job=f"editor-{uuid.uuid4().hex[:12]}",
    )


async def edit_job(ls: ConductorServer, job: ServerJob, request: EditRequest) -> None:
    """conductor.edit and conductor.rewrite: one plan, edits through the editor."""
    job.progress = await Progress.create(ls, job.id)
    job.progress.begin(job.title, "planning")
    config, settings = ls.current_config()
    session = await asyncio.to_thread(ls.session)  # key commands may take a while

    async def apply(output: str, targets: Sequence[str]) -> Applied:
        if job.progress is not None:
            job.progress.report("applying edits", 97)
        applied = await apply_in_editor(
            ls,
            config.root,
            output,
            config.edits,
            label=job.title,
            preview=settings.preview,
            blocked=lambda p: ls.jobs.holder(p, job),
            targets=targets,
        )
        if applied.undo:
            job.undo = BufferUndo(ls, applied.undo, request.episode_job, job.id)
        return applied

    try:
        report = await edit_buffer(session, request, apply, Hooks(on_event=job.on_event))
    except EditError as e:
        finish(ls, job, "refused", str(e), error=True)
        return
    result = report.result
    applied = report.applied
    if applied is None:
        job.report = job_report(job.title, result, [], "")
        failed = result.outcome is RunOutcome.FAILED
        finish(ls, job, result.outcome, outcome_text(result.outcome, result.reason), error=failed)
        return
    job.report = job_report(job.title, result, applied.paths, applied.errors)
    if applied.errors:
        why = no_edit(applied.errors) if not applied.paths else applied.errors.strip()
        finish(ls, job, "failed", why, error=True)
    else:
        spent = f"${result.cost:.4f}, {result.seconds:.1f}s"
        finish(ls, job, "done", f"edited {', '.join(applied.paths)} ({spent})")


def dirty_buffers(ls: ConductorServer, root: Path) -> list[str]:
    """Open buffers whose text differs from the file on disk (unsaved work)."""
    out = []
    for path, doc in open_documents(ls).items():
        if not path.is_relative_to(root):
            continue
        try:
            disk = read_text(path)
        except EditError:
            continue
        if disk is None or disk.text != doc.source:
            out.append(path.relative_to(root).as_posix())
    return out


async def fix_tests_job(ls: ConductorServer, job: ServerJob, instruction: str) -> None:
    """The fix-and-test loop, refused while buffers hold unsaved changes, so the tests run
    on exactly what the user sees; with ``preview`` the fix is reviewed hunk by hunk
    first. Open buffers are refreshed afterwards."""
    job.progress = await Progress.create(ls, job.id)
    config, settings = ls.current_config()
    root = config.root
    dirty = dirty_buffers(ls, root)
    if dirty:
        why = (
            f"save these files first, so the tests run on what you see: {', '.join(sorted(dirty))}"
        )
        finish(ls, job, "refused", why, error=True)
        return
    job.progress.begin(job.title, "running the tests")
    hooks = fix_hooks(ls, job, root, settings.preview)
    try:
        session = await asyncio.to_thread(ls.session)
        report = await fix_repository(session, FixRequest(instruction), hooks)
    except ConductorError as e:
        finish(ls, job, "failed", str(e), error=True)
        return
    last = report.rounds[-1].attempts[0].run if report.rounds else None
    if last is not None:
        job.report = job_report(job.title, last, report.written, "")
    judged = sum(1 for c in report.candidates if c.verdict is not None)
    finish(
        ls,
        job,
        report.outcome,
        f"{outcome_text(report.outcome, report.reason)}; tests {report.tests()}, "
        f"{judged} candidates judged",
        error=not report.end.passed,
    )


def fix_hooks(ls: ConductorServer, job: ServerJob, root: Path, preview: bool) -> Hooks:
    """The editor's side of a fix: progress, a review when ``preview``, unsaved buffers
    as busy files, test diagnostics, and buffers refreshed after each attempt."""
    reviewer = editor_reviewer(ls, root, f"{job.title}: review") if preview else None

    def ended(report: FixReport) -> None:
        job.undo = CheckpointUndo(ls, report.checkpoint.ref)
        job.fix = report

    async def again(report: FixReport) -> bool:
        if report.again and job.progress is not None:
            job.progress.report("trying again with your reasons")
        return report.again

    return Hooks(
        on_event=job.on_event,
        review=reviewer,
        busy=lambda rel: rel in dirty_buffers(ls, root),
        on_tests=lambda run: publish_test_diagnostics(ls, root, run),
        again=again,
        attempt=lambda: buffers_follow_disk(ls, root, job.title),
        on_report=ended,
    )


@contextlib.asynccontextmanager
async def buffers_follow_disk(ls: ConductorServer, root: Path, label: str) -> AsyncIterator[None]:
    """Around a block that changes the workspace's files on disk: its open, unmodified
    buffers are brought in line with them afterwards."""
    before = {p: d.source for p, d in open_documents(ls).items() if p.is_relative_to(root)}
    try:
        yield
    finally:
        await sync_buffers(ls, before, label)


async def sync_buffers(ls: ConductorServer, before: dict[Path, str], label: str) -> None:
    """Bring open, unmodified buffers in line with files changed on disk."""
    texts = {}
    for path, old in before.items():
        try:
            disk = read_text(path)
        except EditError:
            continue
        if disk is not None and disk.text != old:
            texts[path] = (old, disk.text)
    skipped = await replace_buffers(ls, texts, label)
    if skipped:
        ls.show(
            f"Conductor: not refreshed (changed while the tests ran): {', '.join(skipped)}",
            types.MessageType.Warning,
        )


def publish_test_diagnostics(ls: ConductorServer, root: Path, run: TestRun) -> None:
    """Failing tests as diagnostics at their failing line; cleared when green."""
    by_uri: dict[str, list[types.Diagnostic]] = {}
    for f in run.failures:
        if not f.file:
            continue
        path = (root / f.file).resolve()
        if not path.is_relative_to(root):
            continue
        line = max(f.line - 1, 0)
        by_uri.setdefault(path.as_uri(), []).append(
            types.Diagnostic(
                range=types.Range(types.Position(line, 0), types.Position(line, 10_000)),
                message=f"{f.test_id}: {f.message.splitlines()[0] if f.message else 'failed'}",
                severity=types.DiagnosticSeverity.Error,
                source="conductor",
            )
        )
    for uri in ls.diagnostic_uris - set(by_uri):
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
    for uri, diags in by_uri.items():
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diags)
        )
    ls.diagnostic_uris = set(by_uri)


@dataclass
class BufferUndo:
    """An edit job's buffers put back through the editor, unless they changed since."""

    ls: ConductorServer
    #: uri -> (text before, text after).
    texts: dict[str, tuple[str, str]]
    episode_job: str
    job_id: str
    once: bool = True

    async def __call__(self, title: str) -> str:
        docs = {d.uri: d for d in open_documents(self.ls).values()}
        changed = [u for u, (_, new) in self.texts.items() if u in docs and docs[u].source != new]
        if changed:
            raise ConductorError("the files changed since; use the editor's undo")
        texts = {Path(docs[u].path).resolve(): (new, old) for u, (old, new) in self.texts.items()}
        await replace_buffers(self.ls, texts, title)
        self.ls.session().episodes.undo(self.episode_job)
        return f"undid job {self.job_id}"


@dataclass
class CheckpointUndo:
    """A fix's start restored (the command line's rule: never over work done since), the
    open buffers refreshed."""

    ls: ConductorServer
    ref: str
    once: bool = False

    async def __call__(self, title: str) -> str:
        root = self.ls.current_config()[0].root
        episodes = self.ls.session().episodes
        async with buffers_follow_disk(self.ls, root, title):
            done = await asyncio.to_thread(undo, root, job=self.ref, episodes=episodes)
        return f"restored {done.restored.ref}"


async def undo_job(ls: ConductorServer, job: ServerJob, target: ServerJob | None) -> None:
    """Undo the last edit job through the editor, or restore a fix's checkpoint."""
    job.progress = await Progress.create(ls, job.id)
    job.progress.begin(job.title)
    action = target.undo if target is not None else None
    if target is None or action is None:
        finish(ls, job, "failed", "nothing to undo", error=True)
        return
    try:
        said = await action(job.title)
    except ConductorError as e:
        finish(ls, job, "failed", str(e), error=True)
        return
    if action.once:
        target.undo = None
    finish(ls, job, "done", said)


def finish(
    ls: ConductorServer, job: ServerJob, outcome: str, message: str, *, error: bool = False
) -> None:
    """End a job: the progress ends with ``message`` (clients show the title beside it);
    failures are also shown as a notification, with the title, before the progress ends."""
    if error:
        ls.show(
            f"{job.title}: {message}",
            types.MessageType.Error if outcome == "failed" else types.MessageType.Warning,
        )
    job.ended(outcome, message)
