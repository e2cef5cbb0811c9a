"""Code actions: built from the request alone, so they answer in microseconds."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

EDIT = "conductor.edit"
#: ``conductor.edit``'s name until 0.x: answered for one more release (docs/changelog.md).
OLD_EDIT = "conductor.fix"
REWRITE = "conductor.rewrite"
FIX_TESTS = "conductor.fixTests"
CANCEL = "conductor.cancel"
UNDO = "conductor.undo"
SHOW_PLAN = "conductor.showPlan"
REVIEW_DONE = "conductor.reviewDone"
SHOW_CANDIDATES = "conductor.showCandidates"
APPLY_CANDIDATE = "conductor.applyCandidate"
COMMANDS = (
    EDIT,
    OLD_EDIT,
    REWRITE,
    FIX_TESTS,
    CANCEL,
    UNDO,
    SHOW_PLAN,
    REVIEW_DONE,
    SHOW_CANDIDATES,
    APPLY_CANDIDATE,
)
KINDS = [
    types.CodeActionKind.QuickFix,
    types.CodeActionKind.RefactorRewrite,
    types.CodeActionKind.SourceFixAll,
]


def _wanted(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _action(
    title: str, kind: str, command: str, args: dict[str, Any], diags: list[types.Diagnostic]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diags or None,
        command=types.Command(title=title, command=command, arguments=[args]),
    )


def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    only = [str(k) for k in params.context.only] if params.context.only else None
    out: list[types.CodeAction] = []
    diags = [d for d in params.context.diagnostics if d.source != "conductor"] or list(
        params.context.diagnostics
    )
    if diags and _wanted(only, types.CodeActionKind.QuickFix):
        for d in diags[:5]:
            problem = {
                "message": d.message,
                "line": d.range.start.line,
                "source": d.source or "",
                "code": str(d.code or ""),
            }
            args = {"uri": uri, "range": _range_json(d.range), "diagnostics": [problem]}
            title = "Conductor: fix this problem"
            out.append(_action(title, types.CodeActionKind.QuickFix, EDIT, args, [d]))
    r = params.range
    if (r.start.line, r.start.character) != (r.end.line, r.end.character) and _wanted(
        only, types.CodeActionKind.RefactorRewrite
    ):
        args = {"uri": uri, "range": _range_json(r)}
        title = "Conductor: implement / rewrite selection"
        out.append(_action(title, types.CodeActionKind.RefactorRewrite, REWRITE, args, []))
    if _wanted(only, types.CodeActionKind.SourceFixAll):
        title = "Conductor: make the tests pass"
        kind = types.CodeActionKind.SourceFixAll
        out.append(_action(title, kind, FIX_TESTS, {"uri": uri}, []))
    return out
