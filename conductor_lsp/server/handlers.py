"""LSP handlers: translate requests and start jobs; what each job does is in job_bodies.

Registered on the server object by ``app.create_server``. Command arguments
arrive as typed attrs classes (``arguments``), structured by the converter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ..errors import ConductorError
from ..jobs import EditKind
from . import actions
from .app import ConductorServer
from .arguments import EditArgs, FixTestsArgs, JobArgs, ReviewArgs, RewriteArgs
from .compare import apply_candidate, show_candidates
from .job_bodies import edit_job, edit_request, fix_tests_job, undo_job
from .job_table import WHOLE_WORKSPACE, ServerJob


def initialize(ls: ConductorServer, params: types.InitializeParams) -> None:
    try:
        ls.settings.set_layer("initializationOptions", params.initialization_options)
    except ConductorError as e:
        ls.log(f"initializationOptions ignored: {e}", types.MessageType.Error)


async def initialized(ls: ConductorServer, params: types.InitializedParams) -> None:
    ws = ls.client_capabilities.workspace
    if ws and ws.configuration:
        try:
            items = [types.ConfigurationItem(section="conductor")]
            result = await ls.workspace_configuration_async(types.ConfigurationParams(items=items))
            ls.settings.set_layer("workspace/configuration", result[0] if result else None)
        except Exception as e:
            ls.log(f"workspace/configuration failed: {e}", types.MessageType.Warning)
    ls.settings_changed()


def did_change_configuration(
    ls: ConductorServer, params: types.DidChangeConfigurationParams
) -> None:
    try:
        ls.settings.set_layer("didChangeConfiguration", params.settings)
    except ConductorError as e:
        ls.show(f"Conductor: configuration error: {e}", types.MessageType.Error)
        return
    ls.settings_changed()


def code_action(ls: ConductorServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    return actions.code_actions(params)


def progress_cancel(ls: ConductorServer, params: types.WorkDoneProgressCancelParams) -> None:
    ls.jobs.cancel_token(params.token)


def _document(ls: ConductorServer, uri: str) -> Path:
    return Path(ls.workspace.get_text_document(uri).path).resolve()


def _start_edit(
    ls: ConductorServer,
    kind: EditKind,
    title: str,
    uri: str,
    rng: types.Range | None,
    instruction: str,
    diagnostics: list[str],
) -> dict[str, Any]:
    """conductor.edit and conductor.rewrite: one path, one job over one document."""
    path = _document(ls, uri)
    request = edit_request(ls, kind, uri, rng, instruction, diagnostics)
    job_kind = "edit" if kind == "problem" else kind
    return ls.start(
        job_kind, f"{title} {path.name}", frozenset({path}), lambda job: edit_job(ls, job, request)
    )


def edit(ls: ConductorServer, args: EditArgs | None = None) -> dict[str, Any]:
    """conductor.edit: fix the problems at a range of one buffer, with one plan (no tests;
    ``conductor.fixTests`` is the fix loop). Also answers the old name ``conductor.fix``."""
    if args is None:
        raise JsonRpcInvalidParams("uri (a string) is required")
    diags = [f"line {d.line + 1}: {d.message}" for d in args.diagnostics]
    return _start_edit(
        ls, "problem", "Conductor: edit", args.uri, args.range, args.instruction, diags
    )


def rewrite(ls: ConductorServer, args: RewriteArgs | None = None) -> dict[str, Any]:
    if args is None:
        raise JsonRpcInvalidParams("uri (a string) is required")
    return _start_edit(
        ls, "rewrite", "Conductor: rewrite in", args.uri, args.range, args.instruction, []
    )


def fix_tests(ls: ConductorServer, args: FixTestsArgs | None = None) -> dict[str, Any]:
    instruction = args.instruction if args else ""
    return ls.start(
        "fixTests",
        "Conductor: make the tests pass",
        frozenset({WHOLE_WORKSPACE}),
        lambda job: fix_tests_job(ls, job, instruction),
    )


UNDOABLE = ("edit", "rewrite", "fixTests", "applyCandidate")


def review_done(ls: ConductorServer, args: ReviewArgs | None = None) -> dict[str, Any]:
    """The client's answer to a ``conductor/review`` notification."""
    if args is None:
        raise JsonRpcInvalidParams("id (a string) is required")
    if not ls.reviews.answer(args):
        raise JsonRpcInvalidParams(f"no review {args.id} is waiting (answered, or its job ended)")
    return {"accepted": True}


def cancel(ls: ConductorServer, args: JobArgs | None = None) -> dict[str, Any]:
    return {"cancelled": ls.jobs.cancel(args.job_id if args else None)}


def undo(ls: ConductorServer, args: JobArgs | None = None) -> dict[str, Any]:
    done = [
        j
        for j in ls.jobs.jobs.values()
        if j.kind in UNDOABLE and j.undo is not None and j.task is not None and j.task.done()
    ]
    running = [
        j
        for j in ls.jobs.jobs.values()
        if j.kind in UNDOABLE and j.task is not None and not j.task.done()
    ]
    if args is not None and args.job_id is not None:
        done = [j for j in done if j.id == args.job_id]
        running = [j for j in running if j.id == args.job_id]
    order = list(ls.jobs.jobs)
    if running and (not done or order.index(running[-1].id) > order.index(done[-1].id)):
        msg = f"Conductor: job {running[-1].id} ({running[-1].title}) is still running: "
        msg += "wait for it or cancel it"
        ls.show(msg, types.MessageType.Warning)
        return {"started": False, "reason": msg}
    target: ServerJob | None = done[-1] if done else None
    claims = target.claims if target else frozenset()
    return ls.start("undo", "Conductor: undo", claims, lambda job: undo_job(ls, job, target))


async def show_plan(ls: ConductorServer, args: JobArgs | None = None) -> dict[str, Any]:
    jobs = [j for j in ls.jobs.jobs.values() if j.report]
    if args is not None and args.job_id is not None:
        jobs = [j for j in jobs if j.id == args.job_id]
    if not jobs:
        ls.show("Conductor: no finished job to show yet")
        return {"shown": False}
    job = jobs[-1]
    path = ls.write_report(job)
    window = ls.client_capabilities.window
    if window and window.show_document and window.show_document.support:
        await ls.window_show_document_async(
            types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        )
        return {"shown": True, "uri": path.as_uri()}
    return {"shown": False, "uri": path.as_uri(), "markdown": job.report}


FEATURES: list[tuple[str, Any, Any]] = [
    (types.INITIALIZE, initialize, None),
    (types.INITIALIZED, initialized, None),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        code_action,
        types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=False),
    ),
    (types.WINDOW_WORK_DONE_PROGRESS_CANCEL, progress_cancel, None),
]
COMMANDS: list[tuple[str, Any]] = [
    (actions.EDIT, edit),
    (actions.OLD_EDIT, edit),
    (actions.REWRITE, rewrite),
    (actions.FIX_TESTS, fix_tests),
    (actions.CANCEL, cancel),
    (actions.UNDO, undo),
    (actions.SHOW_PLAN, show_plan),
    (actions.REVIEW_DONE, review_done),
    (actions.SHOW_CANDIDATES, show_candidates),
    (actions.APPLY_CANDIDATE, apply_candidate),
]
