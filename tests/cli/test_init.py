"""``init`` against loopback servers that answer ``/v1/models`` as Ollama and vLLM do, a fake
key in the environment, and no network beyond loopback: the file it writes loads, doctor
accepts it, its prices are genai-prices', and the key's value is nowhere in it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price
from helpers import PY, WAIT, cli, cli_env
from standin import StandIn

from conductor_lsp import load_config
from conductor_lsp.config.schema import PriceSource
from conductor_lsp.configure.discover import SERVERS

KEY = "sk-test-NEVER-WRITTEN-7781"
NO_DEFAULTS = [f"--server={name}=" for name in SERVERS]  # only the servers a test starts


@pytest.fixture
def servers() -> Iterator[tuple[StandIn, StandIn]]:
    ollama = StandIn(models=["qwen2.5-coder:7b", "qwen2.5-coder:1.5b"]).start()
    vllm = StandIn(models=["Qwen/Qwen2.5-Coder-32B-Instruct"]).start()
    yield ollama, vllm
    ollama.stop()
    vllm.stop()


def init(
    ws: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {
        "OPENAI_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
        "GEMINI_API_KEY": "",
        "GOOGLE_API_KEY": "",
    }
    return cli("init", str(ws), *NO_DEFAULTS, *args, env={**clean, **(env or {})}, input=input)


def test_init_writes_a_config_doctor_accepts_priced_by_genai_prices(
    tmp_path: Path, servers: tuple[StandIn, StandIn]
) -> None:
    ollama, vllm = servers
    ws = tmp_path / "ws"
    ws.mkdir()
    out = init(
        ws,
        "--yes",
        f"--server=ollama={ollama.url}/v1",
        f"--server=vllm={vllm.url}/v1",
        env={"OPENAI_API_KEY": KEY},
    )
    assert out.returncode == 0, out.stderr
    text = (ws / "conductor.toml").read_text()
    assert KEY not in text and KEY not in out.stdout and 'api_key_env = "OPENAI_API_KEY"' in text
    cfg = load_config(ws, env={"OPENAI_API_KEY": KEY})
    assert set(cfg.workers) == {
        "openai",
        "ollama-qwen2-5-coder-7b",
        "ollama-qwen2-5-coder-1-5b",
        "vllm-qwen-qwen2-5-coder-32b-instruct",
    }
    openai = cfg.workers["openai"]
    price = calc_price(
        Usage(input_tokens=1_000_000, output_tokens=1_000_000),
        model_ref=openai.model,
        provider_id="openai",
    )
    assert (openai.price_in, openai.price_out) == (
        float(price.input_price),
        float(price.output_price),
    )
    assert cfg.prices["openai"].source is PriceSource.LOOKED_UP
    assert cfg.prices["openai"].text().startswith("genai-prices")
    local = cfg.workers["ollama-qwen2-5-coder-7b"]
    assert (
        local.price_in == local.price_out == 0
        and "local server" in cfg.prices["ollama-qwen2-5-coder-7b"].text()
    )
    assert cfg.workers["vllm-qwen-qwen2-5-coder-32b-instruct"].strength > local.strength
    assert cfg.conductor.backend == "static"
    doctor = cli("doctor", str(ws), env={"OPENAI_API_KEY": KEY})
    assert doctor.returncode == 0 and "genai-prices" in doctor.stdout and KEY not in doctor.stdout
    assert "wrote" in out.stdout and "conductor-lsp doctor" in out.stdout  # doctor ran at the end


def test_init_never_overwrites_without_force(
    tmp_path: Path, servers: tuple[StandIn, StandIn]
) -> None:
    ollama, _ = servers
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "conductor.toml").write_text("# mine\n")
    refused = init(ws, "--yes", f"--server=ollama={ollama.url}/v1")
    assert refused.returncode != 0 and "exists" in refused.stderr
    assert (ws / "conductor.toml").read_text() == "# mine\n"
    forced = init(ws, "--yes", "--force", f"--server=ollama={ollama.url}/v1")
    assert forced.returncode == 0, forced.stderr
    assert "ollama-qwen2-5-coder-7b" in (ws / "conductor.toml").read_text()


def test_init_asks_who_works_and_who_conducts(
    tmp_path: Path, servers: tuple[StandIn, StandIn]
) -> None:
    ollama, vllm = servers
    ws = tmp_path / "ws"
    ws.mkdir()
    out = init(
        ws, f"--server=ollama={ollama.url}/v1", f"--server=vllm={vllm.url}/v1", input="1,3\n2\n"
    )
    assert out.returncode == 0, out.stderr
    cfg = load_config(ws)
    assert set(cfg.workers) == {"ollama-qwen2-5-coder-7b", "vllm-qwen-qwen2-5-coder-32b-instruct"}
    assert cfg.conductor.backend == "openai" and cfg.conductor.model == "qwen2.5-coder:1.5b"
    assert cfg.conductor.base_url == f"{ollama.url}/v1"
    assert cfg.prices["conductor"].source is PriceSource.LOCAL_SERVER


def test_with_nothing_reachable_init_writes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    out = init(ws, "--yes", "--server=gone=http://127.0.0.1:9/v1", "--timeout=0.5")
    assert out.returncode == 1 and "found no models" in out.stdout
    assert not (ws / "conductor.toml").exists()


def test_a_price_written_by_hand_wins_and_an_unknown_model_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "conductor.toml").write_text(
        '[workers.a]\nprovider = "openai"\nmodel = "gpt-4o"\nprice_in = 1.0\nprice_out = 2.0\n'
        '[workers.b]\nprovider = "openai"\nmodel = "gpt-4o"\n'
        '[workers.c]\nprovider = "anthropic"\nmodel = "house-model-9"\n'
    )
    cfg = load_config(ws, env={})
    assert (cfg.workers["a"].price_in, cfg.workers["a"].price_out) == (1.0, 2.0)
    assert cfg.prices["a"].source is PriceSource.WRITTEN
    assert cfg.workers["b"].price_in == 2.5 and cfg.prices["b"].source is PriceSource.LOOKED_UP
    assert cfg.workers["c"].price_in == 0 and cfg.prices["c"].source is PriceSource.UNKNOWN


def test_init_without_a_terminal_takes_the_yes_path(
    tmp_path: Path, servers: tuple[StandIn, StandIn]
) -> None:
    """``init < /dev/null`` (a script, CI, an editor task): no traceback, the models found,
    static conducts, and it says why it did not ask."""
    ollama, _ = servers
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(os.devnull) as nothing:
        out = subprocess.run(
            [PY, "-m", "conductor_lsp.cli", "init", str(ws), *NO_DEFAULTS,
             f"--server=ollama={ollama.url}/v1"],
            stdin=nothing, capture_output=True, text=True, timeout=WAIT, env=cli_env(),
        )  # fmt: skip
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "no answer on standard input (no terminal?)" in out.stdout
    cfg = load_config(ws)
    assert len(cfg.workers) == 2 and cfg.conductor.backend == "static"
    # Answers piped in still count; an input that ends after the first leaves static.
    picked = init(ws, "--force", f"--server=ollama={ollama.url}/v1", input="2\n")
    assert picked.returncode == 0, picked.stderr
    assert set(load_config(ws).workers) == {"ollama-qwen2-5-coder-1-5b"}
