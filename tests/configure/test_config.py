from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from conductor_lsp import ConfigError, load_config

REPO = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_conductor_toml_sections(tmp_path: Path) -> None:
    write(
        tmp_path / "conductor.toml",
        """
[conductor]
backend = "static"
max_steps = 3
[workers.fast]
provider = "openai-compatible"
model = "qwen"
base_url = "http://127.0.0.1:1/v1"
price_in = 1
[workers.strong]
provider = "anthropic"
model = "claude-sonnet-4-5"
[test]
command = "python -m pytest -x"
timeout = 60
[budget]
max_calls = 7
max_cost = 0.5
""",
    )
    cfg = load_config(tmp_path, env={})
    assert cfg.conductor.max_steps == 3
    assert list(cfg.workers)[:2] == ["fast", "strong"]  # config order = conductor ids
    assert cfg.workers["fast"].price_in == 1.0
    assert cfg.test.command == "python -m pytest -x"
    assert cfg.workers["tests"].provider == "tests"  # the test tool joins the pool
    assert cfg.budget.max_calls == 7 and cfg.budget.max_cost == 0.5


def test_pyproject_section_then_conductor_toml_then_overrides(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
[tool.conductor-lsp.conductor]
backend = "static"
max_steps = 2
[tool.conductor-lsp.budget]
max_calls = 9
""",
    )
    cfg = load_config(tmp_path, env={})
    assert cfg.conductor.max_steps == 2 and cfg.budget.max_calls == 9
    write(tmp_path / "conductor.toml", "[budget]\nmax_calls = 4\n")
    cfg = load_config(tmp_path, overrides={"budget": {"max_cost": 0.1}}, env={})
    assert cfg.conductor.max_steps == 2  # from pyproject
    assert cfg.budget.max_calls == 4  # conductor.toml wins over pyproject
    assert cfg.budget.max_cost == 0.1  # overrides win over files


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[conductor]\nbakend = 'static'\n", "unknown key conductor.bakend"),
        ("[conductor]\nmax_steps = 'five'\n", "conductor.max_steps must be int, got str"),
        (
            "[conductor]\nbackend = 'openai'\nmodel = 'm'\nconstrained = 1\n",
            "conductor.constrained must be bool, got int 1, for backend openai",
        ),
        ("[budget]\nmax_cost = true\n", "budget.max_cost must be float"),
        ("[workers.x]\nprovider = 'openai'\nmodle = 'gpt'\n", "unknown key workers.x.modle"),
        ("[workers.x]\nprovider = 'opneai'\nmodel = 'gpt'\n", "workers.x.provider must be one of"),
        ("[workers.x]\nprovider = 'openai'\n", "workers.x.model is required"),
        ("[worker.x]\nprovider = 'openai'\n", "unknown key 'worker'"),
        ("[conductor]\nbackend = 'gpt'\n", "conductor.backend must be one of"),
        ("workers = 3\n", "workers must be a table"),
        ("[conductor\n", "invalid TOML"),
        (  # a backend's own keys belong to it: static has none, mlx no adapter
            "[conductor]\nbackend = 'static'\nadapter = '.'\n",
            "unknown key conductor.adapter: backend static has no keys of its own",
        ),
        (
            "[conductor]\nbackend = 'mlx'\nmodel = '.'\nadapter = '.'\n",
            "unknown key conductor.adapter (known: constrained, max_new_tokens), for backend mlx",
        ),
        (
            "[workers.x]\nprovider = 'openai'\nmodel = 'gpt'\ndevice = 'cpu'\n",
            "unknown key workers.x.device: provider openai has no keys of its own",
        ),
        (
            "[conductor]\nbackend = 'transformers'\nmodel = 'm.gguf'\nadapter = 'nowhere'\n",
            "conductor.adapter 'nowhere' is not a LoRA adapter folder",
        ),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, toml: str, message: str) -> None:
    write(tmp_path / "conductor.toml", toml)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(tmp_path, env={})


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path, tmp_path / "nope.toml", env={})


def test_keys_in_environment_join_the_pool(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, env={"ANTHROPIC_API_KEY": "k", "GOOGLE_API_KEY": "g"})
    assert cfg.workers["anthropic"].api_key_env == "ANTHROPIC_API_KEY"
    assert cfg.workers["gemini"].api_key_env == "GOOGLE_API_KEY"
    assert "openai" not in cfg.workers
    assert any("ANTHROPIC_API_KEY is set" in s for s in cfg.sources)


def test_pytest_project_gets_a_default_test_command(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    cfg = load_config(tmp_path, env={})
    assert cfg.test.command == "python -m pytest -q"


def test_a_configuration_is_read_once_and_varied(tmp_path: Path) -> None:
    """eval and training load the file once and vary the result per task and strategy."""
    from conductor_lsp.configure.load import derive

    cfg_file = write(
        tmp_path / "eval.toml",
        '[conductor]\nbackend = "static"\n[workers.big]\nprovider = "openai-compatible"\n'
        'model = "big"\nbase_url = "http://127.0.0.1:1/v1"\nstrength = 2\n',
    )
    base = load_config(tmp_path, cfg_file)
    before = copy.deepcopy(base)
    cfg_file.unlink()  # nothing is read again
    task = tmp_path / "task"
    task.mkdir()
    cfg = derive(
        base,
        {"conductor": {"backend": "search"}, "test": {"command": "python -m pytest -q"}},
        root=task,
    )
    assert cfg.root == task.resolve() and cfg.conductor.backend == "search"
    assert set(cfg.workers) == {"big", "tests"}  # the tests tool joins once there is a command
    assert base.conductor.backend == "static" and base.root == tmp_path.resolve()  # untouched
    pool = derive(
        base, {"workers": {"q": {"provider": "openai-compatible", "model": "q"}}}, root=task
    )
    assert set(pool.workers) == {"q"}  # a layer's workers table is the whole pool
    with pytest.raises(ConfigError, match=r"unknown key conductor\.nope"):
        derive(base, {"conductor": {"nope": 1}}, root=task)
    # Built fresh: the base is what it was, nothing is shared, and where things came
    # from carries over with the new layer after it.
    assert base == before and cfg.workers["big"] is not base.workers["big"]
    assert cfg.sources == [*base.sources, "overrides"] and "big" not in pool.prices
