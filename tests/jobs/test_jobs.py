"""The jobs layer: what every door gets from one function per job."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from conductor_lsp import ConductorError, load_config
from conductor_lsp.context import DEFAULT_INSTRUCTION
from conductor_lsp.errors import UnsafePath
from conductor_lsp.jobs import (
    EditRequest,
    Event,
    ModelNote,
    Session,
    TaskRequest,
    edit_task,
    fix_instruction,
)
from conductor_lsp.jobs.hooks import model_notes
from conductor_lsp.models import stats


def test_an_empty_task_is_refused_before_anything_loads() -> None:
    with pytest.raises(ConductorError, match="the task is empty"):
        TaskRequest("   \n")


def test_the_user_words_come_before_the_standing_rule() -> None:
    assert fix_instruction("") == DEFAULT_INSTRUCTION
    told = fix_instruction("Keep the public names.")
    assert told.startswith("Keep the public names.") and told.endswith(DEFAULT_INSTRUCTION)


async def test_a_model_load_in_a_thread_is_an_event_on_the_jobs_loop() -> None:
    seen: list[tuple[Event, bool]] = []
    loop_thread = threading.get_ident()

    def sink(event: Event) -> None:
        seen.append((event, threading.get_ident() == loop_thread))

    with model_notes(sink):
        await asyncio.to_thread(stats.announce, "loading m.gguf on llama.cpp...")
        stats.announce("loaded m.gguf on llama.cpp in 0.1 s (test)")
        await asyncio.sleep(0)
    stats.announce("after the job: nobody hears this")
    assert [(e.line, home) for e, home in seen if isinstance(e, ModelNote)] == [
        ("loading m.gguf on llama.cpp...", True),
        ("loaded m.gguf on llama.cpp in 0.1 s (test)", True),
    ]


async def test_an_edit_request_becomes_its_task(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    buffer = "def add(a, b):\n    return a - b  # unsaved\n"
    async with Session(load_config(tmp_path, overrides={"conductor": {"backend": "static"}})) as s:
        problem = edit_task(
            s,
            EditRequest("problem", tmp_path / "calc.py", buffer, lines=(2, 2),
                        diagnostics=("line 2: add() subtracts",)),
        )  # fmt: skip
        assert problem.instruction == "Fix this problem: line 2: add() subtracts"
        assert problem.files[0].text == buffer and problem.files[0].selection == (2, 2)
        rewrite = edit_task(
            s,
            EditRequest("rewrite", tmp_path / "calc.py", buffer, lines=(2, 2),
                        selected="    # add them, do not subtract\n    return a - b"),
        )  # fmt: skip
        assert rewrite.instruction.startswith("add them, do not subtract\n\nThe selection")
        with pytest.raises(UnsafePath):
            edit_task(s, EditRequest("problem", tmp_path.parent / "elsewhere.py", "x = 1\n"))


def test_doctor_says_what_holds_the_tests_of_code_we_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_lsp.jobs.doctor import confinement_row
    from conductor_lsp.testrun import probe

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("MY_LLM", "named below")
    (tmp_path / "conductor.toml").write_text(
        '[workers.w]\nprovider = "openai-compatible"\nmodel = "m"\napi_key_env = "MY_LLM"\n'
    )
    what, status, detail = confinement_row(load_config(tmp_path, env={}))
    assert what == "test confinement" and status == "info"
    assert "MY_LLM" in detail and "OPENAI_API_KEY" in detail
    walls = probe()
    assert ("no network" if walls.in_force else walls.why) in detail, detail
    off = load_config(tmp_path, env={})
    off.test.walls = False
    assert "open ([test] walls = false)" in confinement_row(off)[2]
