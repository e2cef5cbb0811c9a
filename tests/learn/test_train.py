"""The conductor learns: GRPO with TRL and a LoRA adapter, and the offline path from
episodes, each end to end for a few steps on a tiny random model built here, with
stand-in workers and rewards from real test runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import WAIT
from standin import Seen, StandIn
from tiny_model import well_formed

from conductor_lsp import ConductorConfig, Task
from conductor_lsp.episodes.records import Episode
from conductor_lsp.eval import load_suite
from conductor_lsp.learn.grpo import TrainOptions, checkpointing
from conductor_lsp.learn.reward import Weights
from conductor_lsp.learn.sft import accepted, example, train_from_episodes
from conductor_lsp.protocols import WorkerInfo

pytest.importorskip("trl")
pytest.importorskip("peft")
SUITE = Path(__file__).resolve().parents[2] / "bench" / "tasks"
TASKS = {t.name: t for t in load_suite(SUITE)}
INFOS = [
    WorkerInfo("quick", "cheap", 1.0, 1.0, "openai-compatible"),
    WorkerInfo("strong", "solves all", 10.0, 10.0, "openai-compatible"),
    WorkerInfo("tests", "runs the tests", 0.0, 0.0, "tests", is_tool=True),
]


def knows_the_fix(seen: Seen) -> str:
    """The stand-in's "strong" model answers with the task's known fix."""
    if seen.body.get("model") != "strong":
        return "I am not sure."
    prompt = json.dumps(seen.body)
    for task in TASKS.values():
        code = [f for f in task.files() if not f.startswith(("test_", "conftest"))]
        if all(f"## File `{f}`" in prompt for f in code):
            return task.solution
    return "no idea"


def suite_of(tmp_path: Path, names: list[str]) -> Path:
    suite = tmp_path / "suite"
    for name in names:
        (suite / name).mkdir(parents=True)
        for f in (SUITE / name).iterdir():
            (suite / name / f.name).write_bytes(f.read_bytes())
    return suite


async def plans_with(out: Path, adapter: str = "") -> object:
    from conductor_lsp.conductor.transformers import TransformersConductor

    conductor = TransformersConductor(
        ConductorConfig(
            backend="transformers", model=str(out), options={"adapter": adapter}, max_steps=3
        )
    )
    return await conductor.plan(Task("Fix add() in calc.py"), INFOS, 3)


async def test_grpo_trains_saves_and_the_result_plans(
    tmp_path: Path, standin: StandIn, tiny_model_dir: Path
) -> None:
    standin.responder = knows_the_fix
    suite = suite_of(tmp_path, ["add_sub", "is_even", "impl_digits_sum", "reverse"])
    config = tmp_path / "train.toml"
    config.write_text(
        f'[conductor]\nmodel = "{tiny_model_dir}"\nmax_steps = 3\n'
        f'[workers.quick]\nprovider = "openai-compatible"\nmodel = "quick"\n'
        f'base_url = "{standin.url}/v1"\nprice_in = 1.0\nprice_out = 1.0\nmax_retries = 0\n'
        f'[workers.strong]\nprovider = "openai-compatible"\nmodel = "strong"\n'
        f'base_url = "{standin.url}/v1"\nprice_in = 10.0\nprice_out = 10.0\nmax_retries = 0\n'
    )
    out = tmp_path / "trained"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    args = ["--steps", "2", "--group", "2", "--batch", "2", "--held-out", "0.5", "--jobs", "2"]
    proc = subprocess.run(
        [sys.executable, "-m", "conductor_lsp.cli", "train", str(suite), "--out", str(out),
         "--config", str(config), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "held-out mean reward" in proc.stdout
    report = json.loads((out / "train.json").read_text())
    assert report["steps"] == 2 and report["after"]["rows"] == 2 and report["before"]["rows"] == 2
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2]
    assert all(m["kl"] is not None for m in metrics)  # the KL penalty is on by default
    # Rewards come from real runs: a valid plan on "strong" makes the tests pass.
    assert all(m["valid"] == 1.0 for m in metrics)  # constrained sampling: always a plan
    assert any(m["green"] > 0 for m in metrics) or report["before"]["solved"] > 0
    assert (out / "adapter" / "adapter_config.json").is_file()
    assert (out / "config.json").is_file() and (out / "reward.png").stat().st_size > 1000
    assert list((out / "checkpoints").glob("checkpoint-*"))  # resumable
    plan: Any = await plans_with(out)  # the merged model loads as a conductor, grammar and all
    assert plan.source == "transformers" and plan.raw.startswith("model_id = [")
    assert plan.steps or "subtask is not an instruction" in plan.error  # random weights
    assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 3
    if sys.platform == "linux" or sys.platform == "darwin":
        pytest.importorskip("mlx_lm")
        from conductor_lsp.conductor.mlx import MLXConductor

        mlx = MLXConductor(ConductorConfig(backend="mlx", model=str(out), max_steps=3))
        plan = await mlx.plan(Task("Fix add() in calc.py"), INFOS, 3)
        assert plan.source == "mlx" and plan.raw.startswith("model_id = [")
        assert plan.steps or "subtask is not an instruction" in plan.error
        assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 3


def recorded(tmp_path: Path) -> list[Episode]:
    """Episodes as a fix loop records them: a conductor plan that beat the baseline, one
    that did not, and the baseline attempts they are compared with."""
    workers = [
        {"name": w.name, "description": w.description, "price_in": w.price_in,
         "price_out": w.price_out, "provider": w.provider, "is_tool": w.is_tool,
         "strength": 0, "affordable": True}
        for w in INFOS
    ]  # fmt: skip

    def ep(job: str, by: str, worker: str, green: bool, cost: float, conductor: bool) -> Episode:
        plan: dict[str, object] = {
            "source": "openai" if conductor else "static",
            "steps": [{"worker": worker, "subtask": "Fix add() now", "access": "all"}],
        }
        if conductor:
            plan["conductor"] = {"cost": 0.0}
        record = {
            "type": "episode", "id": f"{job}-{by}", "job": job, "round": 1, "by": by,
            "inputs": {"task": "## Task\nFix add()", "workers": workers, "max_steps": 3},
            "plan": plan, "fallback": "", "result": {"cost": cost, "seconds": 1.0},
        }  # fmt: skip
        outcome = {"green": green, "failing_before": ["t"], "failing_after": [] if green else ["t"]}
        return Episode.from_json(record, outcome)

    return [
        ep("j1", "conductor", "quick", True, 0.001, True),  # green and cheap: learn it
        ep("j2", "conductor", "quick", False, 0.001, True),  # failed: the baseline won
        ep("j2", "baseline", "strong", True, 0.01, False),
    ]


def test_only_plans_that_beat_the_baseline_are_kept(tmp_path: Path) -> None:
    chosen = accepted(recorded(tmp_path), Weights(cost=10.0))
    assert [e.id for e, _, _ in chosen] == ["j1-conductor"]
    ex = example(chosen[0][0])
    assert ex["completion"][0]["content"].startswith("model_id = [0]\nsubtasks = [")
    assert "0: quick, cheap" in ex["prompt"][0]["content"]


async def test_training_from_episodes_saves_a_conductor_that_plans(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    out = tmp_path / "from-episodes"
    report = train_from_episodes(
        str(tiny_model_dir),
        recorded(tmp_path),
        out,
        TrainOptions(steps=2, batch=1),
        Weights(cost=10.0),
        log=lambda line: None,
    )
    assert report["examples"] == 1 and report["steps"] == 2
    assert (out / "adapter" / "adapter_config.json").is_file()
    plan = await plans_with(out)
    assert plan.source == "transformers"  # type: ignore[attr-defined]
    # The adapter alone on the base model (conductor.adapter) is the merged model again.
    import torch

    from conductor_lsp.models.transformers import LocalModel

    base = LocalModel.get(str(tiny_model_dir), "cpu")
    merged = LocalModel.get(str(out), "cpu")
    adapted = LocalModel.get(str(tiny_model_dir), "cpu", str(out / "adapter"))
    ids = torch.tensor([base.encode_chat("plan", "Fix add() in calc.py")[0]])
    with torch.no_grad():
        logits = [m.model(input_ids=ids).logits for m in (base, merged, adapted)]
    assert torch.allclose(logits[2], logits[1], atol=1e-4)
    assert not torch.allclose(logits[2], logits[0], atol=1e-4)  # training moved it
    plan = await plans_with(tiny_model_dir, str(out / "adapter"))
    assert plan.source == "transformers"  # type: ignore[attr-defined]
    # As a user configures it: the config names both, and doctor shows both.
    from conductor_lsp import load_config
    from conductor_lsp.jobs.doctor import report

    (tmp_path / "conductor.toml").write_text(
        f'[conductor]\nbackend = "transformers"\nmodel = "{tiny_model_dir}"\n'
        f'adapter = "{out / "adapter"}"\n'
    )
    rows = dict((name, detail) for name, _, detail in report(load_config(tmp_path, env={})))
    assert rows["conductor"] == f"transformers {tiny_model_dir} + adapter {out / 'adapter'}"


@pytest.mark.parametrize("name", ["GRPOConfig", "SFTConfig"])
@pytest.mark.parametrize("on", [True, False])
def test_checkpointing_is_set_under_the_name_the_installed_transformers_reads(
    tmp_path: Path, name: str, on: bool
) -> None:
    """The old name warns (and goes in transformers v6); TRL defaults it to on."""
    import trl

    config = getattr(trl, name)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*checkpointing", category=FutureWarning)
        args = config(
            output_dir=str(tmp_path), report_to=[], use_cpu=True, **checkpointing(config, on)
        )
    assert args.gradient_checkpointing is on  # the old name mirrors the new one
    assert getattr(args, "activation_checkpointing", on) is on
