"""The real server over stdio, driven by pytest-lsp with VS Code and Neovim capability profiles."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helpers import EDITOR_CALC, GOOD
from helpers import editor_workspace as workspace
from lsp_editor import SERVER, job_end, progress, run_command, session, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient
from standin import Behaviour, StandIn

BUGGY = EDITOR_CALC
PROFILES = ["visual-studio-code", "neovim@v0.11.0"]


@pytest.fixture
def ws(tmp_path: Path, standin: StandIn) -> Path:
    return workspace(tmp_path / "ws", standin.url)


@pytest.fixture(params=PROFILES)
async def lsp(
    request: pytest.FixtureRequest, ws: Path
) -> AsyncIterator[tuple[LanguageClient, object]]:
    async with session(ws, request.param) as (client, editor):
        yield client, editor


async def code_actions(
    client: LanguageClient,
    uri: str,
    rng: types.Range,
    diags: list[types.Diagnostic],
    only: list[str] | None = None,
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=diags, only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def rng(l1: int, c1: int, l2: int, c2: int) -> types.Range:
    return types.Range(types.Position(l1, c1), types.Position(l2, c2))


async def test_code_actions(lsp: tuple[LanguageClient, object], ws: Path) -> None:
    client, editor = lsp
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    diag = types.Diagnostic(range=rng(1, 4, 1, 16), message="wrong operator", source="pyright")
    acts = await code_actions(client, uri, rng(1, 4, 1, 16), [diag])
    titles = {a.title: a for a in acts}
    assert set(titles) == {
        "Conductor: fix this problem",
        "Conductor: implement / rewrite selection",
        "Conductor: make the tests pass",
    }
    fix = titles["Conductor: fix this problem"]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.command.command == "conductor.edit"
    assert titles["Conductor: make the tests pass"].kind == types.CodeActionKind.SourceFixAll
    only = await code_actions(client, uri, rng(1, 4, 1, 4), [], only=["source.fixAll"])
    assert [a.title for a in only] == ["Conductor: make the tests pass"]
    none = await code_actions(client, uri, rng(1, 4, 1, 4), [], only=["refactor"])
    assert none == []  # an empty selection offers no rewrite


async def test_fix_job_edits_buffer_with_progress(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour(text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(
        client,
        "conductor.edit",
        {
            "uri": uri,
            "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 16}},
            "diagnostics": [{"message": "add() subtracts", "line": 1}],
        },
    )
    assert res["started"] is True
    end = await job_end(client, res["jobId"])
    assert "edited calc.py" in end.message
    assert editor.text(uri) == BUGGY.replace("a - b", "a + b")  # type: ignore[attr-defined]
    assert (ws / "calc.py").read_text() == BUGGY  # through the editor, not behind its back
    reports = progress(client, res["jobId"])
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert reports[0].title == "Conductor: edit calc.py"
    assert any(
        "coder (generation)" in (r.message or "") and "tokens" in (r.message or "")
        for r in reports
        if isinstance(r, types.WorkDoneProgressReport)
    )
    sent = editor.edits[-1]  # type: ignore[attr-defined]
    assert sent.document_changes and sent.document_changes[0].text_document.version == 1
    assert "add() subtracts" in standin.seen[0].prompt()
    # the plan report opens through window/showDocument
    shown = await run_command(client, "conductor.showPlan", {})
    assert shown["shown"] is True
    report = Path(client.shown_documents[-1].uri.removeprefix("file://")).read_text()
    assert (
        "flowchart LR" in report and "| 0 | coder | generation |" in report and "calc.py" in report
    )


async def test_the_old_name_of_the_edit_command_still_works(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    """``conductor.fix`` was the buffer edit's name; clients that still send it get the
    same job for one release (docs/changelog.md)."""
    client, editor = lsp
    standin.push(Behaviour(text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.fix", {"uri": uri})
    end = await job_end(client, res["jobId"])
    assert "edited calc.py" in end.message
    assert editor.text(uri) == BUGGY.replace("a - b", "a + b")  # type: ignore[attr-defined]


async def test_cancel_leaves_buffer_untouched(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour("slow", delay=20, text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.edit", {"uri": uri})
    await wait_for(lambda: standin.seen, what="the worker call")
    cancelled = await run_command(client, "conductor.cancel", {"jobId": res["jobId"]})
    assert cancelled["cancelled"] == [res["jobId"]]
    end = await job_end(client, res["jobId"])
    assert "cancel" in end.message
    await asyncio.sleep(0.3)
    assert editor.text(uri) == BUGGY and editor.edits == []  # type: ignore[attr-defined]


async def test_cancel_from_progress_ui(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour("slow", delay=20, text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.edit", {"uri": uri})
    await wait_for(lambda: standin.seen, what="the worker call")
    client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token=f"conductor-{res['jobId']}")
    )
    end = await job_end(client, res["jobId"])
    assert "cancel" in end.message and editor.edits == []  # type: ignore[attr-defined]


async def test_stale_document_is_rematched(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour("slow", delay=1.0, text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.edit", {"uri": uri})
    await wait_for(lambda: standin.seen, what="the worker call")
    typed = "# the user typed this meanwhile\n" + BUGGY
    editor.type(uri, typed)  # type: ignore[attr-defined]
    end = await job_end(client, res["jobId"])
    assert "edited calc.py" in end.message
    assert editor.text(uri) == typed.replace("a - b", "a + b")  # type: ignore[attr-defined]
    assert editor.edits[-1].document_changes[0].text_document.version == 2  # type: ignore[attr-defined]


async def test_neovim_dropping_a_stale_edit_is_noticed(ws: Path, standin: StandIn) -> None:
    async with session(ws, "neovim@v0.11.0", drops_stale=True) as (client, editor):
        standin.push(Behaviour(text=GOOD))
        uri = editor.open(ws / "calc.py")
        # The user types between the server's send and the editor's apply.
        editor.before_apply = lambda: editor.type(uri, BUGGY + "# typed\n")
        res = await run_command(client, "conductor.edit", {"uri": uri})
        end = await job_end(client, res["jobId"])
        assert "does not hold the edit" in end.message
        assert any("does not hold the edit" in m.message for m in client.messages)


async def test_two_jobs_never_edit_the_same_file(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour("slow", delay=20, text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    first = await run_command(client, "conductor.edit", {"uri": uri})
    second = await run_command(
        client,
        "conductor.rewrite",
        {
            "uri": uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        },
    )
    assert first["started"] and not second["started"]
    assert "already working" in second["reason"]
    await run_command(client, "conductor.cancel", {})


async def test_rewrite_takes_instruction_from_a_comment(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    (ws / "calc.py").write_text("# make this return the sum\ndef add(a, b):\n    return a - b\n")
    standin.push(Behaviour(text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(
        client,
        "conductor.rewrite",
        {
            "uri": uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}},
        },
    )
    await job_end(client, res["jobId"])
    assert "make this return the sum" in standin.seen[0].prompt()
    assert "return a + b" in editor.text(uri)  # type: ignore[attr-defined]


async def test_fix_tests_publishes_and_clears_diagnostics(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    standin.push(Behaviour("slow", delay=1.5, text=GOOD))
    res = await run_command(client, "conductor.fixTests", {})
    test_uri = (ws / "test_calc.py").resolve().as_uri()
    await wait_for(lambda: client.diagnostics.get(test_uri), what="test diagnostics")
    diag = client.diagnostics[test_uri][0]
    assert diag.source == "conductor" and diag.range.start.line == 4 and "test_add" in diag.message
    end = await job_end(client, res["jobId"])
    assert end.message.startswith("green")
    assert "make the tests pass" not in end.message  # clients show the title beside it
    messages = [r.message or "" for r in progress(client, res["jobId"])]
    assert "[1] candidate round 1, floor step 0 (coder): green" in messages  # each candidate shown
    assert list(client.diagnostics[test_uri]) == []  # cleared when green
    assert (ws / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    assert editor.text(uri) == BUGGY.replace("a - b", "a + b")  # type: ignore[attr-defined]
    # undo restores the checkpoint, on disk and in the buffer
    undo = await run_command(client, "conductor.undo", {})
    await job_end(client, undo["jobId"])
    assert (ws / "calc.py").read_text() == BUGGY and editor.text(uri) == BUGGY  # type: ignore[attr-defined]


async def test_fix_tests_refuses_unsaved_buffers(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    editor.type(uri, BUGGY + "# unsaved\n")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.fixTests", {})
    end = await job_end(client, res["jobId"])
    assert "save these files first" in end.message and "calc.py" in end.message
    assert not standin.seen and (ws / "calc.py").read_text() == BUGGY


async def test_undo_of_an_editor_job(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour(text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.edit", {"uri": uri})
    await job_end(client, res["jobId"])
    undo = await run_command(client, "conductor.undo", {})
    end = await job_end(client, undo["jobId"])
    assert "undid job" in end.message and editor.text(uri) == BUGGY  # type: ignore[attr-defined]


async def test_undo_while_the_job_runs_says_so_and_waits_for_nothing(
    lsp: tuple[LanguageClient, object], ws: Path, standin: StandIn
) -> None:
    client, editor = lsp
    standin.push(Behaviour("slow", delay=2.0, text=GOOD))
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    res = await run_command(client, "conductor.edit", {"uri": uri})
    early = await run_command(client, "conductor.undo", {})
    assert early["started"] is False and "still running" in early["reason"]
    assert any("still running" in m.message for m in client.messages)
    await job_end(client, res["jobId"])
    assert "return a + b" in editor.text(uri)  # type: ignore[attr-defined]  # the fix stands
    undo = await run_command(client, "conductor.undo", {})
    end = await job_end(client, undo["jobId"])
    assert "undid job" in end.message and editor.text(uri) == BUGGY  # type: ignore[attr-defined]


async def test_configuration_layers(ws: Path, standin: StandIn) -> None:
    async with session(
        ws,
        "visual-studio-code",
        init_options={"workers": {"coder": {"model": "from-init"}}},
        configuration={"workers": {"coder": {"model": "from-configuration"}}, "preview": True},
    ) as (client, editor):
        uri = editor.open(ws / "calc.py")
        standin.push(Behaviour(text=GOOD), Behaviour(text=GOOD))
        res = await run_command(client, "conductor.edit", {"uri": uri})
        await job_end(client, res["jobId"])
        assert standin.seen[-1].body["model"] == "from-configuration"  # configuration beats init
        sent = editor.edits[-1]
        assert sent.change_annotations["conductor"].needs_confirmation is True  # preview = true
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={
                    "conductor": {"workers": {"coder": {"model": "from-change"}}, "preview": False}
                }
            )
        )
        editor.type(uri, BUGGY)
        await asyncio.sleep(0.2)
        res = await run_command(client, "conductor.edit", {"uri": uri})
        await job_end(client, res["jobId"])
        assert standin.seen[-1].body["model"] == "from-change"
        # a bad setting is reported and the server keeps going
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"conductor": {"budget": {"max_calls": "many"}}}
            )
        )
        await wait_for(
            lambda: any("budget.max_calls must be int" in m.message for m in client.messages),
            what="the config error message",
        )


async def test_bare_client_without_optional_capabilities(ws: Path, standin: StandIn) -> None:
    # no progress, no showDocument, no configuration
    async with session(ws, None) as (client, editor):
        standin.push(Behaviour(text=GOOD + "\nnew_mod.py\n```python\nX = 1\n```\n"))
        uri = editor.open(ws / "calc.py")
        res = await run_command(client, "conductor.edit", {"uri": uri})
        await wait_for(
            lambda: any("edited" in m.message for m in client.log_messages),
            what="the job to log its end",
        )
        assert editor.text(uri) == BUGGY.replace("a - b", "a + b")
        assert editor.edits[-1].changes is not None  # plain `changes`, no versions
        assert (ws / "new_mod.py").read_text() == "X = 1\n"  # created on disk: no resource ops
        shown = await run_command(client, "conductor.showPlan", {"jobId": res["jobId"]})
        assert shown["shown"] is False and "## Plan" in shown["markdown"]


async def test_bad_command_arguments_get_errors_not_crashes(
    lsp: tuple[LanguageClient, object], ws: Path
) -> None:
    client, editor = lsp
    for command, arg, message in [
        ("conductor.edit", "not an object", "expected an object"),
        ("conductor.edit", {}, "uri (a string) is required"),
        (
            "conductor.rewrite",
            {"uri": (ws / "calc.py").as_uri(), "range": {"x": 1}},
            "range must be",
        ),
        ("conductor.rewrite", {"uri": (ws / "calc.py").as_uri()}, "range is required"),
        ("conductor.nope", {}, "is not defined"),
    ]:
        with pytest.raises(Exception, match=re.escape(message)):
            await run_command(client, command, arg)
    logged = [m.message for m in client.log_messages]
    assert any("conductor-lsp bad request" in m for m in logged)
    assert not any("internal error" in m for m in logged)
    uri = editor.open(ws / "calc.py")  # type: ignore[attr-defined]
    assert await code_actions(client, uri, rng(0, 0, 0, 0), [])  # still serving


def test_garbage_on_stdin_does_not_kill_the_server(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )

    def send(obj: object | bytes) -> None:
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    try:
        send(b"{this is not json")
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "wrong"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "initialize",
                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
            }
        )
        replies = b""
        while b'"id": 2' not in replies and b'"id":2' not in replies:
            chunk = proc.stdout.read1(65536)  # type: ignore[union-attr]
            assert chunk, "the server died"
            replies += chunk
        assert b"codeActionProvider" in replies and b"conductor.fixTests" in replies
    finally:
        proc.kill()
        proc.wait()


async def test_cancel_request_stops_the_job_it_started(ws: Path, standin: StandIn) -> None:
    async with session(ws, "visual-studio-code") as (client, editor):
        standin.push(Behaviour("slow", delay=20, text=GOOD))
        uri = editor.open(ws / "calc.py")
        fut = client.protocol.send_request(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="conductor.edit", arguments=[{"uri": uri}]),
            msg_id="fix-request-1",
        )
        res = await asyncio.wrap_future(fut)
        await wait_for(lambda: standin.seen, what="the worker call")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="fix-request-1"))
        end = await job_end(client, res["jobId"])
        assert "cancel" in end.message and editor.edits == []


async def test_log_file_setting(ws: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with session(ws, "visual-studio-code", init_options={"logFile": str(log)}):
        await wait_for(
            lambda: log.exists() and "configuration:" in log.read_text(), what="the log file"
        )


async def test_progress_shows_what_the_conductor_spent(ws: Path, standin: StandIn) -> None:
    conductor = f'backend = "openai"\nmodel = "planner"\nbase_url = "{standin.url}/v1"\n'
    text = (ws / "conductor.toml").read_text()
    text = text.replace('backend = "static"', conductor + "price_in = 50.0")
    (ws / "conductor.toml").write_text(text)
    plan = '{"model_id": [0], "subtasks": ["Fix add() now."], "access_list": ["all"]}'
    standin.responder = lambda s: plan if s.body.get("model") == "planner" else GOOD
    async with session(ws, "visual-studio-code") as (client, editor):
        uri = editor.open(ws / "calc.py")
        res = await run_command(client, "conductor.edit", {"uri": uri})
        end = await job_end(client, res["jobId"])
        assert "edited calc.py" in end.message
        messages = [r.message or "" for r in progress(client, res["jobId"])]
        planned = next(m for m in messages if m.startswith("plan ready: 1 steps (openai)"))
        assert re.search(r"conductor \d+\+\d+ tokens, \$0\.\d{4}", planned)
        # the step reports count the conductor's $ in the running total
        done = next(m for m in messages if "coder (generation)" in m and "(total $" in m)
        assert float(done.split("(total $")[1].split(")")[0]) > 0
