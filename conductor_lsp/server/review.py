"""Review in the editor: the verified fix's hunks, shown before the job writes anything.

Chosen by what the client says it can do:

- ``experimental.conductorReview`` (the Neovim plugin's review buffer, or any client that
  implements it): a ``conductor/review`` notification lists the hunks and the client
  answers with the ``conductor.reviewDone`` command: the hunks kept, a reason for each
  rejected one, and whether to try again with those reasons. The editor never blocks.
- change annotations (VS Code): one WorkspaceEdit with an annotation per hunk that needs
  confirmation, so VS Code's refactor preview lists every hunk with a box to tick. Its
  answer says only "applied": what was kept is read back from the text. The preview has
  no place for words, so a client with ``experimental.conductorReasons`` (the VS Code
  extension) is then sent a ``conductor/reasons`` request listing the unticked hunks and
  answers with a reason for each it wants to give and whether to try again.
- neither: no review; the fix is written whole, as without ``preview``.

Either way the job then writes what was kept, once, through the fix loop's stale-safe end.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..edits.hunks import Hunk, applied_hunks, apply_hunks
from ..edits.workspace import read_text
from ..errors import ConductorError, EditError
from ..jobs import Review, Reviewer
from .app import ConductorServer
from .arguments import ReviewArgs
from .editor_edits import current_text, edit_support, encoding, open_documents
from .positions import position_at

REVIEW = "conductor/review"
REASONS = "conductor/reasons"


def editor_reviewer(ls: ConductorServer, root: Path, title: str) -> Reviewer | None:
    """The review this client can show (None: it can show none)."""
    if _declares(ls, "conductorReview"):
        return lambda hunks: _ask(ls, title, hunks)
    if edit_support(ls)[1]:  # change annotations: VS Code's refactor preview
        return lambda hunks: _preview(ls, root, title, hunks)
    return None


async def _ask(ls: ConductorServer, title: str, hunks: Sequence[Hunk]) -> Review:
    rid = uuid.uuid4().hex[:12]
    fut: asyncio.Future[ReviewArgs] = asyncio.get_running_loop().create_future()
    ls.reviews.waiting[rid] = fut
    shown = _listed(hunks)
    try:
        ls.protocol.notify(REVIEW, {"id": rid, "title": title, "hunks": shown})
        answer = await fut
    finally:
        ls.reviews.waiting.pop(rid, None)
    return Review(
        frozenset(answer.accepted), _reasons(answer.reasons, hunks, answer.accepted), answer.again
    )


def _reasons(
    given: dict[str, str], hunks: Sequence[Hunk], accepted: Sequence[int] = ()
) -> dict[int, str]:
    """Reasons by hunk index, one line each; an index that was not shown is an error."""
    indices = {h.index for h in hunks}
    unknown: list[object] = [*sorted(set(accepted) - indices)]
    reasons: dict[int, str] = {}
    for key, why in given.items():
        try:
            reasons[int(key)] = " ".join(why.split())[:500]
        except ValueError:
            unknown.append(key)
    unknown += sorted(set(reasons) - indices)
    if unknown:
        raise ConductorError(f"the review's answer names hunks that were not shown: {unknown}")
    return reasons


def _declares(ls: ConductorServer, capability: str) -> bool:
    """Whether the client says it implements one of this server's ``experimental`` extras."""
    experimental = ls.client_capabilities.experimental
    return isinstance(experimental, dict) and experimental.get(capability) is True


def _listed(hunks: Sequence[Hunk]) -> list[dict[str, Any]]:
    """Hunks as the client is shown them (``conductor/review``, ``conductor/reasons``)."""
    return [{"index": h.index, "path": h.path, "label": h.label, "diff": h.diff()} for h in hunks]


async def _why_not(
    ls: ConductorServer, title: str, rejected: Sequence[Hunk]
) -> tuple[dict[int, str], bool]:
    """Ask a client that can (``experimental.conductorReasons``) why it unticked hunks
    and whether to try again: (reasons by hunk index, again); none when it cannot."""
    if not rejected or not _declares(ls, "conductorReasons"):
        return {}, False
    try:
        raw = await ls.protocol.send_request_async(
            REASONS, {"title": title, "hunks": _listed(rejected)}
        )
    except (RuntimeError, JsonRpcException) as e:
        raise ConductorError(f"the editor's reasons could not be read: {e}") from e
    reasons, again = _reasons_answer(plain_json(raw))
    return _reasons(reasons, rejected), again


def _reasons_answer(data: Any) -> tuple[dict[str, str], bool]:
    """``{"reasons": [{"index": 1, "reason": "..."}], "again": true}`` (a list, not an
    object keyed by index: pygls hands results over as named tuples, which rename keys
    that are not identifiers); null or {} is no reasons."""
    data = data or {}
    items = data.get("reasons") or [] if isinstance(data, dict) else None
    again = data.get("again", False) if isinstance(data, dict) else None
    ok = (
        isinstance(items, list)
        and isinstance(again, bool)
        and all(
            isinstance(r, dict) and type(r.get("index")) is int and isinstance(r.get("reason"), str)
            for r in items
        )
    )
    if not ok:
        raise ConductorError(
            'the editor\'s reasons must be {"reasons": [{"index": N, "reason": "..."}], '
            f'"again": true|false}}, got {str(data)[:200]}'
        )
    assert isinstance(items, list) and isinstance(again, bool)
    return {str(r["index"]): r["reason"] for r in items}, again


def plain_json(x: Any) -> Any:
    """JSON as dicts and lists (pygls hands a custom request's result over as objects)."""
    if hasattr(x, "_asdict"):
        return plain_json(x._asdict())
    if isinstance(x, dict):
        return {k: plain_json(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [plain_json(v) for v in x]
    return x


def _line_range(text: str, a1: int, a2: int, enc: str) -> types.Range:
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:a1])
    end = sum(len(x) for x in lines[:a2])
    return types.Range(start=position_at(text, start, enc), end=position_at(text, end, enc))


def _current(ls: ConductorServer, path: Path) -> tuple[str, int | None, str | None]:
    try:
        return current_text(open_documents(ls), path)
    except EditError as e:
        raise ConductorError(str(e)) from e


async def _preview(ls: ConductorServer, root: Path, title: str, hunks: Sequence[Hunk]) -> Review:
    enc = encoding(ls)
    by_file: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_file.setdefault(h.path, []).append(h)
    start: dict[str, tuple[str, int | None, str | None]] = {}
    ops: list[types.TextDocumentEdit | types.CreateFile] = []
    notes: dict[str, types.ChangeAnnotation] = {}
    for rel, mine in by_file.items():
        uri, version, text = start[rel] = _current(ls, root / rel)
        if text is None:
            ann = f"hunk-{mine[0].index}"
            ops.append(types.CreateFile(uri=uri, annotation_id=ann))
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.AnnotatedTextEdit(
                range=_line_range(text or "", h.a1, h.a2, enc),
                new_text="".join(h.new),
                annotation_id=f"hunk-{h.index}",
            )
            for h in mine
        ]
        ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        ops.append(types.TextDocumentEdit(text_document=ident, edits=edits))
        for h in mine:
            notes[f"hunk-{h.index}"] = types.ChangeAnnotation(
                label=f"hunk {h.index + 1} of {len(hunks)}: {h.label}",
                needs_confirmation=True,
                description="tick to apply this change",
            )
    edit = types.WorkspaceEdit(document_changes=ops, change_annotations=notes)
    resp = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=title)
    )
    if not resp.applied:  # the preview was discarded: nothing kept
        return Review(frozenset())
    kept: set[int] = set()
    for rel, mine in by_file.items():
        before = start[rel][2]
        text = await _settled(ls, root / rel, start[rel][1], before, mine)
        got = applied_hunks(before, mine, text)
        if got is None:
            raise ConductorError(f"{rel} holds neither the fix nor the start after the preview")
        kept |= got
    reasons, again = await _why_not(ls, title, [h for h in hunks if h.index not in kept])
    return Review(frozenset(kept), reasons, again)


async def _settled(
    ls: ConductorServer,
    path: Path,
    version: int | None,
    before: str | None,
    hunks: Sequence[Hunk],
    timeout: float = 3.0,
) -> str:
    """The file's text once the editor's change reached the server (didChange lags the
    applyEdit answer); a file whose hunks were all unticked does not change at all."""
    whole = apply_hunks(before, hunks, {h.index for h in hunks})
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = open_documents(ls).get(path)
        text: Any = doc.source if doc is not None else None
        moved = doc is not None and (
            doc.version != version if version is not None else text != before
        )
        if text is not None and (text == whole or moved):
            return str(text)
        if asyncio.get_running_loop().time() >= deadline:
            if text is not None:
                return str(text)
            disk = read_text(path)
            return disk.text if disk else (before or "")
        await asyncio.sleep(0.05)
