"""Worker output -> versioned WorkspaceEdit -> workspace/applyEdit, verified by text.

Texts come from the editor's buffers when open (what the user sees), else from
disk. If a buffer changed since it was read, the edits are matched again
against the new text instead of sending a stale version. After the editor
answers, the tracked text must hold the edit: some clients answer
``applied=true`` while dropping stale edits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..edits.apply import apply_edits, edited_paths
from ..edits.model import EditFailure, EditsConfig, FileEdit
from ..edits.parse import parse_edits
from ..edits.paths import check_path
from ..edits.workspace import read_text, same_file, write_all
from ..errors import EditError
from ..jobs import Applied as JobApplied
from .positions import minimal_edit

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.workspace.text_document import TextDocument

ANNOTATION = "conductor"


@dataclass
class Applied(JobApplied):
    """What the editor applied, and each buffer's texts for ``conductor.undo``."""

    #: uri -> (text before, text after)
    undo: dict[str, tuple[str, str]] = field(default_factory=dict)


def open_documents(ls: LanguageServer) -> dict[Path, TextDocument]:
    """Open buffers by resolved path (URIs from clients vary in spelling)."""
    out = {}
    for doc in list(ls.workspace.text_documents.values()):
        try:
            out[Path(doc.path).resolve()] = doc
        except (OSError, ValueError):
            continue
    return out


def encoding(ls: LanguageServer) -> str:
    return str(ls.workspace.position_encoding or "utf-16")


@dataclass
class _Target:
    rel: str
    path: Path
    uri: str
    text: str | None
    version: int | None  # None: not open in the editor


def current_text(
    docs: Mapping[Path, TextDocument], full: Path
) -> tuple[str, int | None, str | None]:
    """(uri, version, text) as the editor has it now: the open buffer (``docs``, from
    ``open_documents``), else the disk (no version; None: no such file). ``EditError`` when
    the disk's file cannot be read as text."""
    doc = docs.get(full)
    if doc is not None:
        return doc.uri, doc.version, doc.source
    disk = read_text(full)
    return full.as_uri(), None, disk.text if disk else None


def _gather(
    ls: LanguageServer,
    root: Path,
    paths: Sequence[str],
    deny: Sequence[str],
    blocked: Callable[[Path], str],
) -> tuple[dict[str, _Target], list[EditFailure]]:
    docs = open_documents(ls)
    targets: dict[str, _Target] = {}
    failures: list[EditFailure] = []
    real: dict[Path, str] = {}
    for rel in paths:
        try:
            full = check_path(root, rel, deny)
            why = same_file(real, full, rel) or blocked(full)
            if why:
                raise EditError(why)
            uri, version, text = current_text(docs, full)
            targets[rel] = _Target(rel, full, uri, text, version)
        except EditError as e:
            failures.append(EditFailure(rel, str(e)))
    return targets, failures


def edit_support(ls: LanguageServer) -> tuple[bool, bool]:
    """(documentChanges usable, change annotations usable) for this client."""
    ws = ls.client_capabilities.workspace
    we = ws.workspace_edit if ws else None
    if we is None:
        return False, False
    # Neovim 0.11 leaves documentChanges out but applies them when resourceOperations is set.
    doc_changes = bool(we.document_changes or we.resource_operations)
    return doc_changes, bool(we.change_annotation_support) and doc_changes


def build_edit(
    ls: LanguageServer,
    targets: dict[str, _Target],
    new_texts: dict[str, str],
    created: set[str],
    label: str,
    preview: bool,
) -> tuple[types.WorkspaceEdit, list[str]]:
    """The WorkspaceEdit, and files that must be created on disk (clients without resource ops)."""
    enc = encoding(ls)
    doc_changes, annotations = edit_support(ls)
    annotate = preview and annotations
    ann_id = ANNOTATION if annotate else None

    def text_edit(old: str, new: str) -> types.TextEdit | types.AnnotatedTextEdit:
        e = minimal_edit(old, new, enc)
        if ann_id:
            return types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=ann_id)
        return e

    if not doc_changes:
        changes = {
            targets[p].uri: [minimal_edit(targets[p].text or "", t, enc)]
            for p, t in new_texts.items()
            if p not in created
        }
        return types.WorkspaceEdit(changes=changes), [p for p in new_texts if p in created]
    ops: list[types.TextDocumentEdit | types.CreateFile] = []
    for p, new in new_texts.items():
        t = targets[p]
        ident = types.OptionalVersionedTextDocumentIdentifier(uri=t.uri, version=t.version)
        if p in created:
            ops.append(
                types.CreateFile(
                    uri=t.uri,
                    annotation_id=ann_id,
                    options=types.CreateFileOptions(ignore_if_exists=True),
                )
            )
            ops.append(types.TextDocumentEdit(text_document=ident, edits=[text_edit("", new)]))
        else:
            ops.append(
                types.TextDocumentEdit(text_document=ident, edits=[text_edit(t.text or "", new)])
            )
    change_annotations = None
    if annotate:
        change_annotations = {
            ANNOTATION: types.ChangeAnnotation(
                label=label, needs_confirmation=True, description="proposed by conductor-lsp"
            )
        }
    return types.WorkspaceEdit(document_changes=ops, change_annotations=change_annotations), []


async def wait_for_text(
    ls: LanguageServer, path: Path, expected: str, timeout: float = 3.0
) -> bool:
    """Whether the buffer for ``path`` comes to hold ``expected`` (didChange may lag the answer)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = open_documents(ls).get(path)
        if doc is None or doc.source == expected:
            return True
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.02)


async def send_texts(
    ls: LanguageServer,
    targets: dict[str, _Target],
    new_texts: dict[str, str],
    created: set[str],
    label: str,
    preview: bool,
) -> Applied:
    edit, to_disk = build_edit(ls, targets, new_texts, created, label, preview)
    if to_disk:
        write_all({targets[p].path: (None, new_texts[p]) for p in to_disk})
    resp = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=label)
    )
    if not resp.applied:
        reason = resp.failure_reason or "no reason given"
        return Applied(errors=f"the editor did not apply the edit: {reason}")
    applied = Applied(paths=sorted(new_texts))
    for p, new in new_texts.items():
        t = targets[p]
        if t.version is not None and not await wait_for_text(ls, t.path, new):
            applied.errors += (
                f"{p}: the editor answered applied=true but the buffer does not hold "
                "the edit (it changed meanwhile?)\n"
            )
        applied.undo[t.uri] = (t.text or "", new)
    return applied


async def apply_in_editor(
    ls: LanguageServer,
    root: Path,
    output: str,
    config: EditsConfig,
    *,
    label: str,
    preview: bool,
    blocked: Callable[[Path], str] = lambda p: "",
    targets: Sequence[str] = (),
) -> Applied:
    """Parse, match against the live buffers, send, verify; all or nothing."""
    edits, failures = await asyncio.to_thread(parse_edits, output)  # untrusted: off the loop
    return await apply_parsed(
        ls,
        root,
        edits,
        failures,
        config,
        label=label,
        preview=preview,
        blocked=blocked,
        targets=targets,
    )


async def apply_parsed(
    ls: LanguageServer,
    root: Path,
    edits: list[FileEdit],
    failures: list[EditFailure],
    config: EditsConfig,
    *,
    label: str,
    preview: bool,
    blocked: Callable[[Path], str],
    targets: Sequence[str] = (),
) -> Applied:
    paths = edited_paths(edits, targets)
    for _ in range(3):
        found, gather_failures = _gather(ls, root, paths, config.all_deny(), blocked)
        texts = {p: t.text for p, t in found.items()}
        # Matching is CPU work on untrusted text: never on the event loop.
        result = await asyncio.to_thread(apply_edits, texts, edits, config, targets=targets)
        result.failures[:0] = failures + gather_failures
        if result.failures or not result.new_texts:
            return Applied(errors=result.report() or "the output held no applicable edit")
        docs = open_documents(ls)
        if all(
            docs[t.path].version == t.version
            for t in found.values()
            if t.version is not None and t.path in docs
        ):
            return await send_texts(ls, found, result.new_texts, result.created, label, preview)
        await asyncio.sleep(0.05)  # a buffer changed while we matched: match again
    return Applied(errors="the documents kept changing; edits not applied")


async def replace_buffers(
    ls: LanguageServer, texts: dict[Path, tuple[str, str]], label: str
) -> list[str]:
    """Set open buffers to new texts (after a disk-level change), each only if it still holds
    the text we expect; returns the paths skipped because the user changed them."""
    docs = open_documents(ls)
    targets: dict[str, _Target] = {}
    new: dict[str, str] = {}
    skipped = []
    for path, (expected_now, text) in texts.items():
        doc = docs.get(path)
        if doc is None or doc.source == text:
            continue
        if doc.source != expected_now:
            skipped.append(str(path))
            continue
        targets[str(path)] = _Target(str(path), path, doc.uri, doc.source, doc.version)
        new[str(path)] = text
    if new:
        await send_texts(ls, targets, new, set(), label, preview=False)
    return skipped
