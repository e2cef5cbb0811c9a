"""The editor must never freeze: CPU work on untrusted text (parsing plans and answers,
matching edits) runs in worker threads, never on the event loop that answers the editor."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from standin import Behaviour, StandIn

from conductor_lsp import ConductorConfig, Task, WorkerInfo
from conductor_lsp.conductor import openai as openai_conductor
from conductor_lsp.edits import EditsConfig
from conductor_lsp.server import editor_edits


def recorder(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Replace ``module.name`` by a wrapper noting whether it ran on the loop's thread."""
    on_loop: list[bool] = []
    real = getattr(module, name)

    def wrapper(*args: Any, **kw: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kw)

    monkeypatch.setattr(module, name, wrapper)
    return on_loop


async def test_plans_are_parsed_off_the_loop(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_loop = recorder(monkeypatch, openai_conductor, "plan_from_output")
    standin.push(
        Behaviour(text='{"model_id": [0], "subtasks": ["Write it now"], "access_list": ["all"]}')
    )
    c = openai_conductor.OpenAIConductor(
        ConductorConfig(backend="openai", model="m", base_url=f"{standin.url}/v1")
    )
    plan = await c.plan(Task("x"), [WorkerInfo("w", "", 0, 0, "openai-compatible")], 3)
    await c.aclose()
    assert plan.steps and on_loop == [False]


async def test_editor_edits_are_parsed_and_matched_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = recorder(monkeypatch, editor_edits, "parse_edits")
    matched = recorder(monkeypatch, editor_edits, "apply_edits")
    (tmp_path / "a.py").write_text("x = 1\n")
    ls = SimpleNamespace(workspace=SimpleNamespace(text_documents={}))
    answer = "a.py\n<<<<<<< SEARCH\nnot there\n=======\ny = 2\n>>>>>>> REPLACE\n"
    applied = await editor_edits.apply_in_editor(
        ls,
        tmp_path,
        answer,
        EditsConfig(),
        label="t",
        preview=False,  # type: ignore[arg-type]
    )
    assert "not found" in applied.errors
    assert parsed == [False] and matched == [False]


async def test_the_fix_loop_parses_and_applies_off_the_loop(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_lsp import FixLoop, Session, load_config
    from conductor_lsp.fix import verify

    parsed = recorder(monkeypatch, verify, "parse_edits")
    applied = recorder(monkeypatch, verify, "apply_output_to_disk")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (tmp_path / "conftest.py").write_text("")
    standin.push(Behaviour(text="calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"))
    import sys

    config = load_config(
        tmp_path,
        overrides={
            "conductor": {"backend": "static"},
            "workers": {
                "w": {
                    "provider": "openai-compatible",
                    "model": "m",
                    "base_url": f"{standin.url}/v1",
                }
            },
            "test": {"command": f"{sys.executable} -m pytest -q -p no:cacheprovider"},
        },
    )
    session = Session(config)
    try:
        report = await FixLoop(session).run()
    finally:
        await session.aclose()
    assert report.end.passed
    assert parsed == [False] and applied == [False]


async def test_a_request_is_fitted_to_its_window_off_the_loop(
    tmp_path: Path, standin: StandIn, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fitting a big task to a small window parses its files again and again (up to a
    second on a real library): not on the loop that answers the editor."""
    from helpers import standin_workers

    from conductor_lsp import FileContext, Plan, Session, Step, load_config
    from conductor_lsp.runtime import engine

    fitted = recorder(monkeypatch, engine, "fit_window")
    workers = {
        n: {**w, "context": 2048, "max_tokens": 256}
        for n, w in standin_workers(standin.url).items()
    }
    config = load_config(
        tmp_path, overrides={"conductor": {"backend": "static"}, "workers": workers}
    )
    big = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(2000))
    task = Task("Fix f7", files=(FileContext("big.py", big),))
    async with Session(config) as session:
        result = await session.run(task, plan=Plan((Step("gpt", "fix it"),), source="test"))
    assert result.outcome == "done" and fitted == [False]
    assert len(standin.seen[0].prompt()) < len(big)  # it was fitted, and sent
