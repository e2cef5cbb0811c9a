"""The language server: LSP in, jobs out. Handlers translate and delegate.

Run with ``conductor-lsp serve`` (stdio) or ``--tcp HOST:PORT`` for debugging.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from .. import __version__
from ..config import Config
from ..errors import ConductorError
from ..jobs import Session
from . import actions
from .jobs import WHOLE_WORKSPACE, JobManager, ServerJob
from .runners import as_dict, edit_job, fix_tests_job, undo_job
from .settings import ServerSettings, SettingsStack

log = logging.getLogger("conductor_lsp.server")


class ConductorProtocol(LanguageServerProtocol):
    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """$/cancelRequest also stops the job that request started (pygls alone won't)."""
        super()._handle_cancel_notification(msg_id)
        server = self._server
        if isinstance(server, ConductorServer):
            server.jobs.cancel_request(msg_id)


class ConductorServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("conductor-lsp", __version__, protocol_cls=ConductorProtocol)
        self.jobs = JobManager()
        self.settings = SettingsStack()
        self.diagnostic_uris: set[str] = set()
        self._config: tuple[Config, ServerSettings] | None = None
        self._session: Session | None = None
        self._old_sessions: list[Session] = []
        self._session_lock = threading.Lock()

    @property
    def root(self) -> Path:
        return Path(self.workspace.root_path or Path.cwd()).resolve()

    def current_config(self) -> tuple[Config, ServerSettings]:
        if self._config is None:
            self._config = self.settings.build(self.root)
        return self._config

    def session(self) -> Session:
        """The shared conductor and workers; built once (jobs call this from threads)."""
        with self._session_lock:
            if self._session is None:
                self._session = Session(self.current_config()[0])
            return self._session

    def settings_changed(self) -> None:
        """Rebuild config on next use; a bad config is reported, the old one kept."""
        try:
            fresh = self.settings.build(self.root)
        except ConductorError as e:
            self.show(f"Conductor: configuration error: {e}", types.MessageType.Error)
            return
        self._config = fresh
        self._log_to(fresh[1].log_file)
        with self._session_lock:
            if self._session is not None:
                self._old_sessions.append(self._session)  # running jobs keep using it
                self._session = None
        self.log(f"configuration: {', '.join(fresh[0].sources) or 'defaults'}")

    def _log_to(self, path: str) -> None:
        """The ``logFile`` setting: one file handler, replaced when the path changes."""
        root = logging.getLogger("conductor_lsp")
        wanted = str(Path(path).resolve()) if path else ""
        mine = [
            h
            for h in root.handlers
            if isinstance(h, logging.FileHandler) and getattr(h, "_conductor_setting", False)
        ]
        for h in mine:
            if h.baseFilename != wanted:
                root.removeHandler(h)
                h.close()
        if path and not any(h.baseFilename == wanted for h in mine):
            handler = logging.FileHandler(path, encoding="utf-8")
            handler.setFormatter(
                logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
            )
            handler._conductor_setting = True  # type: ignore[attr-defined]
            root.addHandler(handler)
            root.setLevel(logging.INFO)

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        log.info(message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.log(message, kind)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
        bad_input = isinstance(error, JsonRpcException) or isinstance(
            error.__cause__, JsonRpcException
        )
        kind, what = (
            (types.MessageType.Warning, "bad request")
            if bad_input
            else (types.MessageType.Error, "internal error")
        )
        try:
            self.window_log_message(
                types.LogMessageParams(type=kind, message=f"conductor-lsp {what}: {error}")
            )
        except Exception:
            pass

    def close_idle_sessions(self) -> None:
        """Close sessions replaced by a configuration change once no job can use them."""
        if self.jobs.running() or not self._old_sessions:
            return
        old, self._old_sessions = self._old_sessions, []

        async def close() -> None:
            for session in old:
                await session.aclose()

        asyncio.get_running_loop().create_task(close())

    def start(self, kind: str, title: str, claims: frozenset[Path], body: Any) -> dict[str, Any]:
        """Start a job unless it would edit a file another job holds; returns at once."""
        self.close_idle_sessions()
        other = self.jobs.conflict(claims)
        if other is not None:
            msg = f"Conductor: job {other.id} ({other.title}) is already working on these files"
            self.show(msg, types.MessageType.Warning)
            return {"started": False, "reason": msg}
        job = self.jobs.start(kind, title, claims, body, request_id=self.protocol.msg_id)
        return {"started": True, "jobId": job.id}


def _range(value: Any) -> types.Range | None:
    if value is None:
        return None
    try:
        s, e = value["start"], value["end"]
        return types.Range(
            types.Position(int(s["line"]), int(s["character"])),
            types.Position(int(e["line"]), int(e["character"])),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"range must be {{start: {{line, character}}, end: ...}}: {err}") from None


def _args(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    try:
        return as_dict(args[0] if args else None, command)
    except ValueError as e:
        raise JsonRpcInvalidParams(str(e)) from None


def create_server() -> ConductorServer:
    server = ConductorServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: ConductorServer, params: types.InitializedParams) -> None:
        ws = ls.client_capabilities.workspace
        if ws and ws.configuration:
            try:
                items = [types.ConfigurationItem(section="conductor")]
                result = await ls.workspace_configuration_async(
                    types.ConfigurationParams(items=items)
                )
                ls.settings.set_layer("workspace/configuration", result[0] if result else None)
            except Exception as e:
                ls.log(f"workspace/configuration failed: {e}", types.MessageType.Warning)
        ls.settings_changed()

    @server.feature(types.INITIALIZE)
    def initialize(ls: ConductorServer, params: types.InitializeParams) -> None:
        try:
            ls.settings.set_layer("initializationOptions", params.initialization_options)
        except ConductorError as e:
            ls.log(f"initializationOptions ignored: {e}", types.MessageType.Error)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: ConductorServer, params: types.DidChangeConfigurationParams
    ) -> None:
        try:
            ls.settings.set_layer("didChangeConfiguration", params.settings)
        except ConductorError as e:
            ls.show(f"Conductor: configuration error: {e}", types.MessageType.Error)
            return
        ls.settings_changed()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=False),
    )
    def code_action(ls: ConductorServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions.code_actions(params)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: ConductorServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.jobs.cancel_token(params.token)

    def target(ls: ConductorServer, a: dict[str, Any]) -> tuple[Path, types.Range | None]:
        """The document (as a resolved path) and range a command is about."""
        uri = a.get("uri")
        if not isinstance(uri, str) or not uri:
            raise JsonRpcInvalidParams("uri (a string) is required")
        try:
            rng = _range(a.get("range"))
        except ValueError as e:
            raise JsonRpcInvalidParams(str(e)) from None
        return Path(ls.workspace.get_text_document(uri).path).resolve(), rng

    @server.command(actions.FIX)
    def fix(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.FIX)
        path, rng = target(ls, a)
        diags = [
            f"line {d.get('line', 0) + 1}: {d.get('message', '')}"
            for d in a.get("diagnostics") or []
            if isinstance(d, dict)
        ]
        instruction = str(
            a.get("instruction") or "Fix this problem: " + "; ".join(diags or ["(see file)"])
        )
        return ls.start(
            "fix",
            f"Conductor: fix {path.name}",
            frozenset({path}),
            lambda job: edit_job(ls, job, a["uri"], rng, instruction, diags),
        )

    @server.command(actions.REWRITE)
    def rewrite(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.REWRITE)
        path, rng = target(ls, a)
        if rng is None:
            raise JsonRpcInvalidParams("range is required for a rewrite")
        instruction = str(a.get("instruction") or "")
        return ls.start(
            "rewrite",
            f"Conductor: rewrite in {path.name}",
            frozenset({path}),
            lambda job: edit_job(ls, job, a["uri"], rng, instruction, []),
        )

    @server.command(actions.FIX_TESTS)
    def fix_tests(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.FIX_TESTS)
        instruction = str(a.get("instruction") or "")
        return ls.start(
            "fixTests",
            "Conductor: make the tests pass",
            frozenset({WHOLE_WORKSPACE}),
            lambda job: fix_tests_job(ls, job, instruction),
        )

    @server.command(actions.CANCEL)
    def cancel(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.CANCEL)
        job_id = a.get("jobId")
        return {"cancelled": ls.jobs.cancel(str(job_id) if job_id is not None else None)}

    @server.command(actions.UNDO)
    def undo(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.UNDO)
        done = [
            j
            for j in ls.jobs.jobs.values()
            if j.kind in ("fix", "rewrite", "fixTests")
            and (j.undo or j.checkpoint_ref)
            and j.task is not None
            and j.task.done()
        ]
        if a.get("jobId") is not None:
            done = [j for j in done if j.id == str(a["jobId"])]
        target: ServerJob | None = done[-1] if done else None
        claims = target.claims if target else frozenset()
        return ls.start("undo", "Conductor: undo", claims, lambda job: undo_job(ls, job, target))

    @server.command(actions.SHOW_PLAN)
    async def show_plan(ls: ConductorServer, *args: Any) -> dict[str, Any]:
        a = _args(args, actions.SHOW_PLAN)
        jobs = [j for j in ls.jobs.jobs.values() if j.report]
        if a.get("jobId") is not None:
            jobs = [j for j in jobs if j.id == str(a["jobId"])]
        if not jobs:
            ls.show("Conductor: no finished job to show yet")
            return {"shown": False}
        job = jobs[-1]
        root = ls.current_config()[0].root
        path = root / ".conductor" / "reports" / f"job-{job.id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(job.report, encoding="utf-8")
        window = ls.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            await ls.window_show_document_async(
                types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
            )
            return {"shown": True, "uri": path.as_uri()}
        return {"shown": False, "uri": path.as_uri(), "markdown": job.report}

    return server


def serve(tcp: str | None = None, log_file: str | None = None) -> None:
    """Run the server on stdio (or TCP for debugging)."""
    if log_file:
        logging.basicConfig(
            filename=log_file,
            level=logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
