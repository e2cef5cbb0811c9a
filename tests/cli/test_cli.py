"""The CLI in real subprocesses, against the loopback stand-in."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import helpers
import pytest
from helpers import standin_workers
from standin import Seen, StandIn


def toml_value(v: object) -> str:
    return json.dumps(v)


def write_config(root: Path, url: str, backend: str = "static", extra: str = "") -> Path:
    lines = [f"[conductor]\nbackend = {toml_value(backend)}\n{extra}"]
    for name, spec in standin_workers(url).items():
        lines.append(f"[workers.{name}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in spec.items()]
    path = root / "conductor.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = helpers.WAIT
) -> subprocess.CompletedProcess[str]:
    return helpers.cli(*args, cwd=cwd, env=env, timeout=timeout)


def test_plan_static_json(tmp_path: Path, standin: StandIn, keys: dict[str, str]) -> None:
    write_config(tmp_path, standin.url)
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["source"] == "static"
    # The baseline: one call to the strongest (here the priciest) worker.
    assert [(s["role"], s["worker"]) for s in plan["steps"]] == [("generation", "claude")]
    assert "conductor" not in plan  # no model was asked
    assert not standin.seen  # planning statically calls no worker


def test_pipeline_is_a_named_strategy(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    write_config(tmp_path, standin.url, backend="pipeline")
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert [(s["role"], s["worker"]) for s in plan["steps"]] == [
        ("analysis", "gpt"),
        ("generation", "claude"),
        ("debugging", "claude"),
    ]


def test_strength_orders_equally_priced_workers(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    write_config(tmp_path, standin.url)
    text = (tmp_path / "conductor.toml").read_text()
    text = text.replace("[workers.gem]", "[workers.gem]\nstrength = 10")
    (tmp_path / "conductor.toml").write_text(text)
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    assert json.loads(out.stdout)["steps"][0]["worker"] == "gem"
    write_config(tmp_path, standin.url, extra='worker = "gpt"\n')  # single:gpt
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    plan = json.loads(out.stdout)
    assert plan["source"] == "single:gpt" and plan["steps"][0]["worker"] == "gpt"


def test_plan_table(tmp_path: Path, standin: StandIn, keys: dict[str, str]) -> None:
    write_config(tmp_path, standin.url)
    out = cli("plan", "Fix add()", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Plan (static)" in out.stdout and "generation" in out.stdout and "claude" in out.stdout


def test_run_prints_output_and_cost(tmp_path: Path, standin: StandIn, keys: dict[str, str]) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    standin.responder = lambda s: f"answer from {s.body.get('model', 'gemini')}"
    write_config(tmp_path, standin.url, backend="pipeline")
    out = cli("run", "Fix add()", "--file", "calc.py", cwd=tmp_path, env=keys)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "step 0 done: gpt (analysis)" in out.stdout
    assert "answer from claude-sonnet-4-5" in out.stdout  # the final step's output
    assert "total" in out.stdout and "Cost" in out.stdout
    assert len(standin.seen) == 3
    assert all("return a - b" in s.prompt() for s in standin.seen)
    for key in keys.values():
        assert key not in out.stdout + out.stderr


def test_run_with_conductor_endpoint(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    plan_text = (
        'model_id = [2, 0]\nsubtasks = ["Find the bug", "Write the fix"]\naccess_list = [[], "all"]'
    )

    def respond(seen: Seen) -> str:
        return plan_text if seen.body.get("model") == "conductor-7b" else "worker says hi"

    standin.responder = respond
    extra = f'model = "conductor-7b"\nbase_url = "{standin.url}/v1"\nprice_in = 1.0\n'
    write_config(tmp_path, standin.url, backend="openai", extra=extra)
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["source"] == "openai"
    assert [s["worker"] for s in plan["steps"]] == ["gem", "gpt"]
    assert plan["call"]["usage"]["input_tokens"] > 0 and plan["call"]["cost"] > 0
    assert "structured output: json_schema" in plan["notes"][-1]
    conductor_prompt = standin.seen[0].prompt()
    assert "0: gpt, stand-in OpenAI, $1/$2" in conductor_prompt
    assert "Fix add()" in conductor_prompt
    body = standin.seen[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["max_tokens"] > 1000  # raised to what the schema can need


def test_bad_conductor_output_falls_back_and_says_why(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    standin.responder = lambda s: "model_id = [9]\nsubtasks = ['x']\naccess_list = [[]]"
    extra = f'model = "conductor-7b"\nbase_url = "{standin.url}/v1"\n'
    write_config(tmp_path, standin.url, backend="openai", extra=extra)
    out = cli("plan", "Fix add()", "--json", cwd=tmp_path)
    assert out.returncode == 0
    plan = json.loads(out.stdout)
    assert plan["source"].startswith("static (fallback: openai: step 0: unknown worker id 9")


def test_config_error_exit_2(tmp_path: Path) -> None:
    (tmp_path / "conductor.toml").write_text("[conductor]\nmax_step = 3\n")
    out = cli("plan", "x", cwd=tmp_path)
    assert out.returncode == 2
    assert "unknown key conductor.max_step" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("fix", "{missing}"), "workspace {missing} is not a directory"),
        (("undo", "{missing}"), "workspace {missing} is not a directory"),
        (("eval", "{missing}"), "{missing}"),
        (("run", ""), "the task is empty"),
        (("plan", "  \n "), "the task is empty"),
    ],
)
def test_a_missing_workspace_or_an_empty_task_is_named_first(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    missing = str(tmp_path / "no" / "such" / "dir")
    out = cli(*(a.format(missing=missing) for a in args), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert message.format(missing=missing) in out.stderr
    assert "test command" not in out.stderr and "Traceback" not in out.stderr


def test_doctor_reports_without_leaking_keys(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    write_config(tmp_path, standin.url)
    out = cli("doctor", cwd=tmp_path, env={**keys, "TEST_GEMINI_KEY": ""})
    assert out.returncode == 0, out.stderr
    assert "worker gpt" in out.stdout and "key in TEST_OPENAI_KEY (set, not checked" in out.stdout
    assert "no key: set TEST_GEMINI_KEY" in out.stdout
    assert "backend static" in out.stdout
    for key in keys.values():
        assert key not in out.stdout


def test_doctor_check_asks_each_provider_with_its_key(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    """``--check``: "ok" means the provider took the key and listed its models; a key it
    refuses is "no", saying so (and never printed)."""
    write_config(tmp_path, standin.url)
    standin.models = ["gpt-5-mini", "claude-sonnet-4-5"]
    standin.accepted_keys = {keys["TEST_OPENAI_KEY"], keys["TEST_GEMINI_KEY"]}
    out = cli("doctor", "--check", cwd=tmp_path, env=keys)
    assert out.returncode == 0, out.stderr
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if "│" in line}
    assert "ok" in rows["worker gpt"] and "the key works: 2 models listed" in rows["worker gpt"]
    assert "gpt-5-mini among them" in rows["worker gpt"]
    assert "no" in rows["worker claude"] and "refused the key (401)" in out.stdout
    assert (
        "gemini-2.5-flash not among them" in out.stdout
    )  # gem's key works; its model is not there
    for key in keys.values():
        assert key not in out.stdout


@pytest.mark.slow
def test_plan_with_real_smollm2_on_cpu(tmp_path: Path, smollm2: Path) -> None:
    """The embedded default: no config, no keys. SmolLM2 is the worker; it is too small to
    plan, so the conductor is static and doctor says why; named, it plans on the GGUF."""
    no_keys = {k: "" for k in os.environ if k.endswith("_API_KEY")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return cli(*args, cwd=tmp_path, env=no_keys)

    out = run("plan", "Fix the bug in add()", "--json")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["source"] == "static", plan
    assert [s["worker"] for s in plan["steps"]] == ["local"]
    doctor = run("doctor")
    assert "conductor = static (the only local model" in doctor.stdout, doctor.stdout
    assert "too small" in doctor.stdout
    (tmp_path / "conductor.toml").write_text('[conductor]\nbackend = "transformers"\n')
    out = run("plan", "Fix the bug in add()", "--json")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    # The model was asked and answered (grammar-constrained, so its answer parses); what a
    # 135M model writes differs from machine to machine, so the contract is asserted, not
    # its words: a plan of the pool's worker, or the plan check's refusal and static.
    assert plan["call"]["usage"]["output_tokens"] > 0, plan
    assert 1 <= len(plan["steps"]) <= 5
    assert all(s["worker"] == "local" for s in plan["steps"])
    if plan["source"] != "transformers":
        assert plan["source"].startswith("static (fallback: "), plan
        assert plan["error"] and plan["error"] in plan["source"], plan


def test_denied_files_are_never_sent(
    tmp_path: Path, standin: StandIn, keys: dict[str, str]
) -> None:
    write_config(tmp_path, standin.url)
    (tmp_path / ".env").write_text("TOKEN=abc\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id_rsa").write_text("PRIVATE\n")
    for f in (".env", str(tmp_path / "keys" / "id_rsa")):
        out = cli("run", "use this", "--file", f, cwd=tmp_path)
        assert out.returncode == 2 and "matches the deny list" in out.stderr
    assert not standin.seen
