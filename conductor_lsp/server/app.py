"""The server object: its state (jobs, settings, the shared session) and helpers.

Handlers (``handlers``) are registered on it by ``create_server`` in this package's
``__init__``; they translate LSP and delegate to jobs (``job_bodies``, run by ``job_table``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from ..config.schema import Config
from ..errors import ConductorError
from ..jobs import Session
from ..storage.state import state_dir
from ..version import __version__
from . import arguments
from .job_table import JobManager, Reviews, ServerJob
from .settings import ServerSettings, SettingsStack
from .transport import Reader, read_messages

log = logging.getLogger("conductor_lsp.server")


def make_converter() -> cattrs.Converter:
    """lsprotocol's converter, taught the command argument classes."""
    return arguments.register(default_converter())


class ConductorServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "conductor-lsp",
            __version__,
            converter_factory=make_converter,
        )
        self.jobs = JobManager()
        self.settings = SettingsStack()
        self.diagnostic_uris: set[str] = set()
        self.reviews = Reviews()
        self._config: tuple[Config, ServerSettings] | None = None
        self._session: Session | None = None
        self._old_sessions: list[Session] = []
        self._session_lock = threading.Lock()
        #: Set when the server shuts down: the reader stops.
        self.stopped = threading.Event()

    # pygls 2.1.1 reads messages with its own loop (``start_io``, ``start_tcp``), which
    # lets a few bad messages end the server or go unanswered, and cancels only requests
    # still waiting to run. Both doors below run our own reader instead
    # (``transport.read_messages``), built from pygls's public parts only: its stdio
    # reader and writer, ``protocol.set_writer``, ``thread_pool`` and ``shutdown``.

    def serve_stdio(self, stdin: Any = None, stdout: Any = None) -> None:
        """The server on stdio, with the guarded reader of ``transport``."""
        self.stopped.clear()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._read(reader))
        except BrokenPipeError:
            log.error("the client is gone; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """One client over TCP (for debugging), with the same guarded reader."""
        self.stopped.clear()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)
            await self._read(reader)
            self.shutdown()

        async def serve() -> None:
            server = await asyncio.start_server(connection, host, port)
            async with server:
                await server.serve_forever()

        try:
            asyncio.run(serve())
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def _read(self, reader: Reader) -> None:
        await read_messages(
            self.stopped, reader, self.protocol, self.report_server_error, self.jobs.cancel_request
        )

    def shutdown(self) -> None:
        self.stopped.set()
        super().shutdown()

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

    def start(
        self,
        kind: str,
        title: str,
        claims: frozenset[Path],
        body: Callable[[ServerJob], Awaitable[None]],
    ) -> dict[str, Any]:
        """Start a job unless it would edit a file another job holds; returns at once."""
        self.close_idle_sessions()
        other = self.jobs.conflict(claims)
        if other is not None:
            msg = f"Conductor: job {other.id} ({other.title}) is already working on these files"
            self.show(msg, types.MessageType.Warning)
            return {"started": False, "reason": msg}
        job = self.jobs.start(kind, title, claims, body, request_id=self.protocol.msg_id)
        return {"started": True, "jobId": job.id}

    def write_report(self, job: ServerJob) -> Path:
        """The job's Markdown report under .conductor/reports/, for showPlan."""
        path = state_dir(self.current_config()[0].root) / "reports" / f"job-{job.id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(job.report, encoding="utf-8")
        return path
