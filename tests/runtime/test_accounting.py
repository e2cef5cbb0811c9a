"""Every token and every stop accounted for: the conductor's own calls, raw plans in
traces, budgets as hard caps, the test command everywhere, doctor on a path."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import BUGGY, PLAN, WHOLE_FIX, cli, coder_workspace, openai_conductor
from helpers import by_model as answer_for
from standin import Behaviour, Seen, StandIn

PY = sys.executable
FIX = WHOLE_FIX
#: A model conductor without the floor beside it: what it plans and spends, alone.
ALONE_TABLE = "[fix]\nfloor = false\n"
ALONE = ALONE_TABLE


def workspace(root: Path, url: str, conductor: str = "", extra: str = "") -> Path:
    return coder_workspace(root, url, conductor or 'backend = "static"', extra)


def traces(root: Path) -> list[dict[str, object]]:
    files = sorted((root / ".conductor" / "traces").glob("*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def cost_row(stdout: str, name: str) -> list[str]:
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 6 and cells[1] == name:
            return cells[1:-1]
    raise AssertionError(f"no {name!r} row in:\n{stdout}")


def answer_by_model(plan: str, work: str) -> object:
    return answer_for({"planner": plan}, default=work)


def test_the_conductor_is_counted_in_table_report_and_trace(
    tmp_path: Path, standin: StandIn
) -> None:
    # The conductor alone: beside the floor, whose call runs first and is green here, it
    # would never be asked.
    root = workspace(tmp_path / "ws", standin.url, openai_conductor(standin.url), ALONE)
    standin.responder = answer_by_model(PLAN, FIX)  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    conductor = cost_row(out.stdout, "conductor")
    coder = cost_row(out.stdout, "coder")
    total = cost_row(out.stdout, "total")
    assert conductor[1] == "1" and int(conductor[2]) > 0 and float(conductor[5]) > 0
    assert int(total[1]) == int(conductor[1]) + int(coder[1])  # calls: the conductor's too
    assert float(total[5]) == pytest.approx(float(conductor[5]) + float(coder[5]), abs=2e-4)
    assert re.search(r"conductor \d+\+\d+ tokens, \$\d\.\d{4}", out.stdout)  # the report
    plan = next(r for r in traces(root) if r["type"] == "plan")
    spent = plan["plan"]["call"]  # type: ignore[index]
    assert spent["usage"]["input_tokens"] > 0 and spent["cost"] > 0  # type: ignore[index]
    assert plan["plan"]["raw"] == PLAN and not plan["plan"]["error"]  # type: ignore[index]


def test_a_fallback_keeps_the_conductors_raw_answer_in_the_trace(
    tmp_path: Path, standin: StandIn
) -> None:
    prose = "Here is the workflow for solving this task:\n1. **Analyse** the code.\n" * 3
    root = workspace(tmp_path / "ws", standin.url, openai_conductor(standin.url), ALONE)
    standin.responder = answer_by_model(prose, FIX)  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    plan = next(r for r in traces(root) if r["type"] == "plan")
    kept: dict[str, Any] = plan["plan"]  # type: ignore[assignment]
    assert kept["raw"] == prose and "no plan found" in kept["error"]
    assert kept["source"].startswith("static (fallback: openai")
    assert kept["call"]["usage"]["output_tokens"] > 0
    assert "fallback: openai: no plan found" in out.stdout


def test_the_raw_answer_in_a_trace_is_bounded(tmp_path: Path, standin: StandIn) -> None:
    huge = "x" * 50_000 + "THE END"
    root = workspace(tmp_path / "ws", standin.url, openai_conductor(standin.url), ALONE)
    standin.responder = answer_by_model(huge, FIX)  # type: ignore[assignment]
    assert cli("fix", str(root)).returncode == 0
    raw = str(next(r for r in traces(root) if r["type"] == "plan")["plan"]["raw"])  # type: ignore[index]
    assert len(raw) < 10_000 and raw.startswith("xxxx") and raw.endswith("THE END")
    assert "characters cut" in raw


def test_the_conductor_spends_from_the_call_budget(tmp_path: Path, standin: StandIn) -> None:
    # Without the floor: its baseline call would run beside the plan and take the one call.
    extra = "[budget]\nmax_calls = 1\n[fix]\nfloor = false\n"
    root = workspace(tmp_path / "ws", standin.url, openai_conductor(standin.url), extra)
    standin.responder = answer_by_model(PLAN, FIX)  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 1
    assert "budget: calls (1 of 1 made)" in out.stdout
    assert "budget: budget" not in out.stdout  # the outcome, then which budget: said once
    assert [s.body["model"] for s in standin.seen] == ["planner"]  # no worker call after it


def test_max_seconds_is_a_hard_cap_while_a_worker_is_slow(tmp_path: Path, standin: StandIn) -> None:
    root = workspace(tmp_path / "ws", standin.url, extra="[budget]\nmax_seconds = 3\n")
    standin.push(Behaviour("slow", delay=300, text=FIX))
    started = time.monotonic()
    out = cli("fix", str(root))
    wall = time.monotonic() - started
    assert out.returncode == 1, out.stdout + out.stderr
    assert "budget: time (3s spent)" in out.stdout
    assert "budget: budget" not in out.stdout
    assert "the output held no edit" not in out.stdout  # the truth: the budget ended it
    loop_seconds = float(re.search(r"-> [\w ]+ in ([\d.]+)s", out.stdout).group(1))  # type: ignore[union-attr]
    # The slow call was cancelled at the cap, not waited for (bounds a busy machine keeps).
    assert loop_seconds < 60
    assert wall < 150
    assert (root / "calc.py").read_text() == BUGGY


def test_fix_test_is_the_command_of_the_tests_tool_worker_too(
    tmp_path: Path, standin: StandIn
) -> None:
    root = workspace(tmp_path / "ws", standin.url, openai_conductor(standin.url), ALONE)
    text = (root / "conductor.toml").read_text().replace("[test]\n", "[oldtest]\n")
    (root / "conductor.toml").write_text(text.split("[oldtest]")[0] + ALONE_TABLE)
    (root / "test_slow_unrelated.py").write_text("def test_other():\n    assert False\n")
    plan = json.dumps(
        {"model_id": [1, 0], "subtasks": ["Run the tests now", "Fix add() now."],
         "access_list": [[], "all"]}
    )  # fmt: skip
    standin.responder = answer_by_model(plan, FIX)  # type: ignore[assignment]
    command = f"{PY} -m pytest -q -p no:cacheprovider test_calc.py"
    out = cli("fix", str(root), "--test", command)
    assert out.returncode == 0, out.stdout + out.stderr
    worker_prompt = standin.seen[1].prompt()  # the coder saw the tests tool's run
    assert "test_calc.py" in worker_prompt and "-p no:cacheprovider test_calc.py" in worker_prompt
    assert "test_slow_unrelated" not in worker_prompt


def test_doctor_takes_a_path_and_knows_local_servers_need_no_key(
    tmp_path: Path, standin: StandIn
) -> None:
    root = workspace(tmp_path / "ws", standin.url)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = cli("doctor", str(root), cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    assert "worker coder" in out.stdout
    assert "no key (none needed for a local server)" in out.stdout
    assert "OPENAI_COMPATIBLE_API_KEY" not in out.stdout
    out = cli("doctor", str(root), "--config", str(root / "conductor.toml"), cwd=elsewhere)
    assert out.returncode == 0 and str(root / "conductor.toml") in out.stdout


def test_unknown_cached_tokens_show_a_dash(tmp_path: Path, standin: StandIn) -> None:
    from rich.console import Console

    from conductor_lsp.cli.render import cost_table
    from conductor_lsp.usage import Tally, Usage

    known, unknown = Tally(), Tally()
    known.add(Usage(10, 5, 4), 0.1)
    unknown.add(Usage(10, 5, None), 0.1)
    console = Console(width=200, record=True, no_color=True)
    console.print(cost_table({"known": known, "unknown": unknown}))
    text = console.export_text()
    assert cost_row(text, "known")[2:4] == ["10", "4"]
    assert cost_row(text, "unknown")[2:4] == ["10", "-"]
    assert cost_row(text, "total")[3] == "4"


def floor_workspace(root: Path, url: str, extra: str = "") -> Path:
    workspace(root, url, openai_conductor(url), extra)
    text = (
        (root / "conductor.toml")
        .read_text()
        .replace(
            '[workers.coder]\nprovider = "openai-compatible"\nmodel = "coder"\n',
            '[workers.weak]\nprovider = "openai-compatible"\nmodel = "weak"\n'
            f'base_url = "{url}/v1"\nmax_retries = 0\nstrength = 1\n'
            '[workers.strong]\nprovider = "openai-compatible"\nmodel = "strong"\nstrength = 2\n',
        )
    )
    (root / "conductor.toml").write_text(text)
    return root


def by_model(seen: Seen) -> str:
    model = seen.body.get("model")
    if model == "planner":  # always routes the fix to the weak worker
        return json.dumps({"model_id": [0], "subtasks": ["Fix add() now."], "access_list": ["all"]})
    if model == "weak":
        return "calc.py\n```python\ndef add(a, b):\n    return a * b\n```\n"
    return FIX


def test_the_floor_runs_first_and_a_green_floor_spares_the_plan(
    tmp_path: Path, standin: StandIn
) -> None:
    """By default the likeliest candidate per dollar runs first: with no policy to say
    otherwise, the floor's own call; green, it spares the conductor's call and the plan."""
    root = floor_workspace(tmp_path / "ws", standin.url)
    standin.responder = by_model  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 1 (floor):" in out.stdout and "round 1 (conductor):" not in out.stdout
    assert [s.body["model"] for s in standin.seen] == ["strong"]
    assert (root / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")


def test_the_floor_runs_the_baseline_beside_the_plan(tmp_path: Path, standin: StandIn) -> None:
    root = floor_workspace(tmp_path / "ws", standin.url, '[fix]\nprefer = "latency"\n')
    standin.responder = by_model  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 1 (conductor):" in out.stdout and "round 1 (floor):" in out.stdout
    assert "candidate round 1, floor step 0 (strong): edited calc.py; tests green" in out.stdout
    assert {"planner", "strong"} <= {s.body["model"] for s in standin.seen}
    # The baseline works from the round's start, never from the weak worker's edit.
    strong = next(s for s in standin.seen if s.body["model"] == "strong")
    assert "return a - b" in strong.prompt() and "a * b" not in strong.prompt()
    assert (root / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")


def test_without_the_floor_a_bad_plan_is_not_rescued(tmp_path: Path, standin: StandIn) -> None:
    root = floor_workspace(tmp_path / "ws", standin.url, "[fix]\nfloor = false\n")
    standin.responder = by_model  # type: ignore[assignment]
    out = cli("fix", str(root), "--max-iterations", "2")
    assert out.returncode == 1
    assert "strong" not in [s.body["model"] for s in standin.seen]
    assert "tests: 1 failing -> 1 failing" in out.stdout
