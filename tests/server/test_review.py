"""Review in the editor and Show Candidates: the real server over stdio (pytest-lsp, with
VS Code's and Neovim's capability profiles) and a real headless Neovim with the plugin.
The code-server test drives VS Code's own refactor preview (tests/server/test_vscode.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import editor_workspace as workspace
from lsp_editor import job_end, run_command, run_nvim, session, wait_for
from standin import Behaviour, StandIn

from conductor_lsp.episodes.log import read_episodes
from conductor_lsp.errors import EditError
from conductor_lsp.server.review import plain_json

# Both functions wrong; the tests check both.
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
ADD = "    return a + b\n"
EVAL = '    return eval(f"{a} * {b}")\n'
FIRST = (  # fixes both; the second hunk in a way the user rejects
    "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n" + ADD + ">>>>>>> REPLACE\n"
    "calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n" + EVAL + ">>>>>>> REPLACE\n"
)
REASON = "no eval: write a * b"
MUL = (
    "calc.py\n<<<<<<< SEARCH\ndef mul(a, b):\n    return a + b\n=======\n"
    "def mul(a, b):\n    return a * b\n>>>>>>> REPLACE\n"
)
GREEN = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


def project(tmp_path: Path, standin: StandIn, rounds: int = 1) -> Path:
    ws = workspace(tmp_path / "ws", standin.url)
    (ws / "calc.py").write_text(BUGGY)
    (ws / "test_calc.py").write_text(TESTS)
    toml = (ws / "conductor.toml").read_text()
    (ws / "conductor.toml").write_text(toml + f"[budget]\nmax_iterations = {rounds}\n")
    return ws


def episodes(ws: Path) -> list[Any]:
    return read_episodes(ws / ".conductor" / "episodes.jsonl")


async def test_vs_code_preview_has_a_box_per_hunk_and_only_the_ticked_one_is_written(
    tmp_path: Path, standin: StandIn
) -> None:
    ws = project(tmp_path, standin)
    standin.push(Behaviour(text=FIRST))
    async with session(ws, "visual-studio-code", configuration={"preview": True}) as (
        client,
        editor,
    ):
        uri = editor.open(ws / "calc.py")
        editor.untick = {"hunk-1"}  # the user unticks the eval in the refactor preview
        res = await run_command(client, "conductor.fixTests", {})
        end = await job_end(client, res["jobId"])
        sent = editor.edits[0]
        notes = sent.change_annotations or {}
        assert sorted(notes) == ["hunk-0", "hunk-1"]
        assert all(n.needs_confirmation for n in notes.values())
        assert "calc.py:2" in notes["hunk-0"].label and "calc.py:6" in notes["hunk-1"].label
        kept = BUGGY.replace("a - b", "a + b", 1)
        assert (ws / "calc.py").read_text() == kept  # the ticked hunk alone, on disk
        assert editor.text(uri) == kept
        assert "1 failing" in end.message  # tested without the unticked hunk
    rejected = [e for e in episodes(ws) if e.rejected]
    assert rejected and "calc.py:6" in rejected[0].rejected[0]
    assert not any(e.green for e in rejected)


async def test_vs_code_is_asked_why_for_unticked_hunks_and_tries_again_with_the_reason(
    tmp_path: Path, standin: StandIn
) -> None:
    """The refactor preview has no place for words: the extension declares
    ``experimental.conductorReasons`` and is asked about the unticked hunks afterwards; its
    reason reaches the retry's prompt and the episode, and the retry is previewed again."""
    ws = project(tmp_path, standin)
    standin.push(Behaviour(text=FIRST), Behaviour(text=MUL))
    asked: list[Any] = []
    async with session(
        ws,
        "visual-studio-code",
        configuration={"preview": True},
        experimental={"conductorReasons": True},
    ) as (client, editor):

        @client.feature("conductor/reasons")
        def on_reasons(ls: Any, params: Any) -> dict[str, Any]:
            asked.append(plain_json(params))
            if len(asked) == 1:
                return {"reasons": [{"index": 1, "reason": REASON}], "again": True}
            return {}

        editor.open(ws / "calc.py")
        editor.untick = {"hunk-1"}
        res = await run_command(client, "conductor.fixTests", {})
        end = await job_end(client, res["jobId"])
        assert [h["label"] for h in asked[0]["hunks"]] == ["calc.py:6"]  # only the unticked
        assert "+    return eval" in asked[0]["hunks"][0]["diff"]
        assert REASON in standin.seen[1].prompt()  # the reason reached the worker
        assert len(editor.edits) == 2 and len(asked) == 1  # the retry's fix, all ticked
        assert "tests 1 failing -> green" in end.message
    assert (ws / "calc.py").read_text() == GREEN
    rejected = [e for e in episodes(ws) if e.rejected]
    assert rejected and REASON in rejected[0].rejected[0]


async def test_review_notification_answered_with_a_reason_tries_again_with_it(
    tmp_path: Path, standin: StandIn
) -> None:
    """A client with ``experimental.conductorReview`` (the Neovim plugin's way) gets the
    hunks, answers with ``conductor.reviewDone``, and the retry's prompt holds the reason."""
    ws = project(tmp_path, standin)
    standin.push(Behaviour(text=FIRST), Behaviour(text=MUL))
    shown: list[Any] = []
    async with session(
        ws,
        "neovim@v0.11.0",
        configuration={"preview": True},
        experimental={"conductorReview": True},
    ) as (client, editor):

        @client.feature("conductor/review")
        def on_review(ls: Any, params: Any) -> None:
            shown.append(params)

        editor.open(ws / "calc.py")
        res = await run_command(client, "conductor.fixTests", {})
        await wait_for(lambda: len(shown) == 1, what="the review")
        first = shown[0]
        hunks = _get(first, "hunks")
        assert [h["label"] for h in hunks] == ["calc.py:2", "calc.py:6"]
        assert "+    return eval" in hunks[1]["diff"]
        with pytest.raises(Exception, match="no review"):
            await run_command(client, "conductor.reviewDone", {"id": "nope"})
        answer = {"id": _get(first, "id"), "accepted": [0], "reasons": {"1": REASON}}
        await run_command(client, "conductor.reviewDone", {**answer, "again": True})
        await wait_for(lambda: len(shown) == 2, what="the retry's review")
        assert REASON in standin.seen[1].prompt()  # the reason reached the worker
        second = _get(shown[1], "hunks")
        await run_command(
            client,
            "conductor.reviewDone",
            {"id": _get(shown[1], "id"), "accepted": [h["index"] for h in second]},
        )
        end = await job_end(client, res["jobId"])
        assert "tests 1 failing -> green" in end.message
    assert (ws / "calc.py").read_text() == GREEN


def _get(obj: Any, key: str) -> Any:
    return plain_json(obj)[key]


async def test_candidates_are_listed_and_another_is_applied_then_undone(
    tmp_path: Path, standin: StandIn
) -> None:
    ws = project(tmp_path, standin, rounds=2)
    wrong = f"calc.py\n```python\n{BUGGY.replace('a - b', 'a * b', 1)}```\n"
    standin.push(Behaviour(text=wrong), Behaviour(text=f"calc.py\n```python\n{GREEN}```\n"))
    async with session(ws, "visual-studio-code") as (client, editor):
        editor.open(ws / "calc.py")
        res = await run_command(client, "conductor.fixTests", {})
        await job_end(client, res["jobId"])
        assert (ws / "calc.py").read_text() == GREEN
        listed = await run_command(client, "conductor.showCandidates", {})
        cands = _get(listed, "candidates")
        assert [c["verdict"] for c in cands] == ["2 failing", "green"]
        assert [c["chosen"] for c in cands] == [False, True]
        assert "+    return a * b" in cands[0]["diff"] and cands[0]["applicable"]
        assert cands[1]["cost"] > 0 and cands[1]["tokens"] > 0
        res = await run_command(client, "conductor.applyCandidate", {"index": 0})
        end = await job_end(client, res["jobId"])
        assert "applied candidate 0" in end.message
        assert (ws / "calc.py").read_text() == BUGGY.replace("a - b", "a * b", 1)
        bad = await run_command(client, "conductor.applyCandidate", {"index": 7})
        assert "no candidate 7" in (await job_end(client, bad["jobId"])).message
        undo = await run_command(client, "conductor.undo", {})
        await job_end(client, undo["jobId"])
        assert (ws / "calc.py").read_text() == GREEN
    assert any("applied round 1" in r for e in episodes(ws) for r in e.rejected)


def test_a_candidate_is_not_applied_over_a_file_changed_since_the_job(tmp_path: Path) -> None:
    from conductor_lsp.checkpoints import store as cp
    from conductor_lsp.fix.candidates import Candidate, Round, State, Verdict
    from conductor_lsp.fix.pick import pick
    from conductor_lsp.fix.report import FixReport
    from conductor_lsp.plan import Step
    from conductor_lsp.runtime.results import StepResult
    from conductor_lsp.testrun import TestRun

    (tmp_path / "calc.py").write_text(BUGGY)
    start = cp.create(tmp_path, f"{cp.JOB_START}: test")
    run = TestRun("pytest", 1, "1 failed", 0.1)
    step = StepResult(0, Step("coder", "fix it"))
    other = State({"calc.py": GREEN.encode()}, run, "round 1, step 0 (coder)")
    cand = Candidate(1, step, verdict=Verdict(["calc.py"], tests=run), state=other)
    report = FixReport("failed", "", run, run, start, [Round(1, candidates=[cand])])
    (tmp_path / "calc.py").write_text("user's own work\n")
    with pytest.raises(EditError, match=r"changed since the job ended: calc\.py"):
        pick(tmp_path, report, 0, [])
    assert (tmp_path / "calc.py").read_text() == "user's own work\n"
    (tmp_path / "calc.py").write_text(BUGGY)
    with pytest.raises(EditError, match="changed since the job ended"):
        pick(tmp_path, report, 0, [], busy=lambda rel: True)  # an unsaved buffer
    picked = pick(tmp_path, report, 0, [])
    assert picked.written == ["calc.py"] and (tmp_path / "calc.py").read_text() == GREEN


def test_neovim_review_buffer_accepts_one_hunk_and_rejects_one_with_a_reason(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = project(tmp_path, standin)
    standin.push(Behaviour(text=FIRST), Behaviour(text=MUL))
    monkeypatch.setenv("CONDUCTOR_SETTINGS", json.dumps({"preview": True}))
    monkeypatch.setenv("CONDUCTOR_REASON", REASON)
    result = run_nvim(ws, "review", tmp_path)
    assert result["shown"] and result["shown_again"] and result["ended"], result
    lines = "\n".join(result["review_lines"])  # type: ignore[arg-type]
    assert "[?] hunk 1/2 calc.py:2" in lines and "+    return eval" in lines
    marked = "\n".join(result["marked"])  # type: ignore[arg-type]
    assert "[y] hunk 1/2 calc.py:2" in marked
    assert f"[n] hunk 2/2 calc.py:6  ({REASON})" in marked
    assert result["answer"] == {"accepted": [0], "reasons": {"1": REASON}, "again": True}
    assert REASON in standin.seen[1].prompt()  # the next round's brief holds the reason
    assert result["retry_hunks"] == 1
    assert result["disk"] == GREEN
    rejected = [e for e in episodes(ws) if e.rejected]
    assert rejected and REASON in rejected[0].rejected[0]


def test_neovim_shows_candidates_applies_the_other_one_and_undo_restores(
    tmp_path: Path, standin: StandIn
) -> None:
    ws = project(tmp_path, standin, rounds=2)
    wrong = BUGGY.replace("a - b", "a * b", 1)
    standin.push(
        Behaviour(text=f"calc.py\n```python\n{wrong}```\n"),
        Behaviour(text=f"calc.py\n```python\n{GREEN}```\n"),
    )
    result = run_nvim(ws, "candidates", tmp_path)
    assert result["fixed"] and result["listed"] and result["applied"] and result["undone"], result
    assert result["disk_fixed"] == GREEN
    listing = "\n".join(result["candidate_lines"])  # type: ignore[arg-type]
    assert "#0 round 1, floor step 0 (coder)  2 failing" in listing
    assert (
        "#1 round 2, floor step 0 (coder)  green" in listing and "[applied by the job]" in listing
    )
    assert result["disk_applied"] == wrong
    assert result["disk_undone"] == GREEN


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX editors only")


def test_the_editors_reasons_are_read_strictly() -> None:
    from conductor_lsp.errors import ConductorError
    from conductor_lsp.server.review import _reasons_answer

    assert _reasons_answer(None) == ({}, False)  # the user gave nothing
    answer = {"reasons": [{"index": 2, "reason": "no eval"}], "again": True}
    assert _reasons_answer(answer) == ({"2": "no eval"}, True)
    for bad in ([1], {"reasons": {"2": "x"}}, {"reasons": [{"index": "2", "reason": "x"}]},
                {"again": "yes"}):  # fmt: skip
        with pytest.raises(ConductorError, match="reasons must be"):
            _reasons_answer(bad)
