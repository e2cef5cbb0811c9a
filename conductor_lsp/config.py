"""Configuration: one dataclass per section, loaded from TOML or editor settings.

Order (later wins): embedded defaults, ``pyproject.toml [tool.conductor-lsp]``,
``conductor.toml`` at the workspace root (or ``--config FILE``), editor settings,
command-line flags. Unknown keys and wrong types are errors naming the key.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

BACKENDS = ("auto", "static", "transformers", "mlx", "openai")
PROVIDERS = ("openai", "anthropic", "gemini", "openai-compatible", "local", "tests")


@dataclass
class ConductorConfig:
    backend: str = "auto"
    """static, transformers, mlx, openai or auto (a local model if one is found, else static)."""
    model: str = ""
    """GGUF file or model directory (transformers, mlx); model name (openai)."""
    base_url: str = ""
    """OpenAI-compatible endpoint serving the conductor, e.g. http://127.0.0.1:8000/v1."""
    api_key_env: str = ""
    """Variable holding the endpoint's key (openai backend)."""
    api_key_cmd: str = ""
    """Command whose stdout is the endpoint's key."""
    max_steps: int = 5
    """Most steps a plan may have."""
    device: str = "auto"
    """auto, cpu, cuda or mps (transformers)."""
    constrained: bool = True
    """Constrain local decoding to the three-list grammar (needs xgrammar)."""
    max_new_tokens: int = 400
    """Most tokens the conductor may write (raised to the grammar's bound when constrained)."""
    temperature: float = 0.0
    """0 means greedy decoding."""
    timeout: float = 120.0
    """Seconds for one plan (openai backend)."""


@dataclass
class WorkerConfig:
    provider: str = ""
    """openai, anthropic, gemini, openai-compatible, local or tests."""
    model: str = ""
    """Provider's model name, or a GGUF file / directory for local."""
    base_url: str = ""
    """Override the provider's endpoint (OpenAI style ends in /v1; Anthropic, Gemini: host root)."""
    api_key_env: str = ""
    """Variable holding the key (default: the provider's usual one)."""
    api_key_cmd: str = ""
    """Command whose stdout is the key (wins over api_key_env)."""
    description: str = ""
    """One line the conductor sees about this worker."""
    price_in: float = 0.0
    """Dollars per million input tokens."""
    price_out: float = 0.0
    """Dollars per million output tokens."""
    max_tokens: int = 4096
    """Most tokens one answer may have."""
    temperature: float = -1.0
    """Sampling temperature; negative leaves the provider's default."""
    timeout: float = 120.0
    """Seconds for one call (connect, and each read)."""
    max_retries: int = 4
    """Retries on 429, 5xx and connection errors."""
    concurrency: int = 4
    """Most calls in flight to this worker's endpoint at once."""
    stream: bool = False
    """Stream the answer (SSE)."""
    device: str = "auto"
    """auto, cpu, cuda or mps (local)."""


@dataclass
class TestConfig:
    __test__ = False  # not a pytest class
    command: str = ""
    """Test command; default `python -m pytest -q` in a workspace that looks like a pytest one."""
    timeout: float = 300.0
    """Seconds before the whole test process group is killed."""


@dataclass
class BudgetConfig:
    max_calls: int = 30
    """Most worker calls for one job (a fix loop: for all iterations)."""
    max_cost: float = 2.0
    """Most dollars for one job."""
    max_seconds: float = 900.0
    """Most wall-clock seconds for one job."""
    max_iterations: int = 5
    """Most fix-and-test rounds."""


@dataclass
class TraceConfig:
    dir: str = ".conductor/traces"
    """Where JSONL traces go, relative to the workspace root."""
    enabled: bool = True
    """Write a trace per job."""


@dataclass
class EditsConfig:
    deny: list[str] = field(default_factory=list)
    """Extra glob patterns never edited nor shown to models (added to the built-in list)."""
    fuzzy_threshold: float = 0.85
    """Similarity (0-1) a fuzzy SEARCH match needs; it must also be the only such place."""

    def all_deny(self) -> list[str]:
        from .edits.paths import DEFAULT_DENY

        return [*DEFAULT_DENY, *self.deny]


@dataclass
class Config:
    conductor: ConductorConfig = field(default_factory=ConductorConfig)
    workers: dict[str, WorkerConfig] = field(default_factory=dict)
    test: TestConfig = field(default_factory=TestConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    trace: TraceConfig = field(default_factory=TraceConfig)
    edits: EditsConfig = field(default_factory=EditsConfig)
    root: Path = field(default_factory=Path.cwd)
    #: Where each part came from, for ``doctor``.
    sources: list[str] = field(default_factory=list)


_SECTIONS: dict[str, type] = {
    "conductor": ConductorConfig,
    "test": TestConfig,
    "budget": BudgetConfig,
    "trace": TraceConfig,
    "edits": EditsConfig,
}


def _check(value: Any, hint: Any, key: str) -> Any:
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif hint == list[str]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise ConfigError(f"{key} must be a list of strings, got {value!r}")
    else:  # pragma: no cover - only the types above are used
        raise ConfigError(f"{key}: unsupported type {hint}")
    name = getattr(hint, "__name__", str(hint))
    raise ConfigError(f"{key} must be {name}, got {type(value).__name__} {value!r}")


def _update(obj: Any, data: Any, prefix: str) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix} must be a table, got {type(data).__name__}")
    hints = typing.get_type_hints(type(obj))
    names = {f.name for f in dataclasses.fields(obj)}
    for key, value in data.items():
        if key not in names:
            known = ", ".join(sorted(names))
            raise ConfigError(f"unknown key {prefix}.{key} (known: {known})")
        setattr(obj, key, _check(value, hints[key], f"{prefix}.{key}"))


def merge(cfg: Config, data: dict[str, Any], source: str) -> Config:
    """Merge one layer of settings (already parsed) into ``cfg`` in place."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: settings must be a table")
    for key, value in data.items():
        if key in _SECTIONS:
            _update(getattr(cfg, key), value, key)
        elif key == "workers":
            if not isinstance(value, dict):
                raise ConfigError("workers must be a table of [workers.NAME] tables")
            for name, wdata in value.items():
                worker = cfg.workers.get(name) or WorkerConfig()
                _update(worker, wdata, f"workers.{name}")
                cfg.workers[name] = worker
        else:
            raise ConfigError(
                f"unknown key {key!r} in {source} (known: {', '.join([*_SECTIONS, 'workers'])})"
            )
    cfg.sources.append(source)
    return cfg


def validate(cfg: Config) -> None:
    if cfg.conductor.backend not in BACKENDS:
        raise ConfigError(
            f"conductor.backend must be one of {', '.join(BACKENDS)}, got {cfg.conductor.backend!r}"
        )
    if not 0 < cfg.edits.fuzzy_threshold <= 1:
        raise ConfigError("edits.fuzzy_threshold must be above 0 and at most 1")
    if not 1 <= cfg.conductor.max_steps <= 20:
        raise ConfigError("conductor.max_steps must be between 1 and 20")
    for name, w in cfg.workers.items():
        if w.provider not in PROVIDERS:
            raise ConfigError(
                f"workers.{name}.provider must be one of {', '.join(PROVIDERS)}, got {w.provider!r}"
            )
        if w.provider not in ("local", "tests") and not w.model:
            raise ConfigError(f"workers.{name}.model is required for provider {w.provider}")
        if w.concurrency < 1:
            raise ConfigError(f"workers.{name}.concurrency must be at least 1")
        if w.max_retries < 0:
            raise ConfigError(f"workers.{name}.max_retries must not be negative")
        if w.price_in < 0 or w.price_out < 0:
            raise ConfigError(f"workers.{name}: prices must not be negative")
    for key in ("max_calls", "max_iterations"):
        if getattr(cfg.budget, key) < 1:
            raise ConfigError(f"budget.{key} must be at least 1")


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e


def load_config(
    root: Path | None = None,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    env: typing.Mapping[str, str] | None = None,
) -> Config:
    """Load the layered configuration for a workspace; see the module docstring."""
    from .defaults import apply_defaults

    root = (root or Path.cwd()).resolve()
    cfg = Config(root=root)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        tool = read_toml(pyproject).get("tool", {})
        section = tool.get("conductor-lsp") if isinstance(tool, dict) else None
        if section is not None:
            merge(cfg, section, f"{pyproject} [tool.conductor-lsp]")
    file = config_file or (root / "conductor.toml")
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    if file.is_file():
        merge(cfg, read_toml(file), str(file))
    if overrides:
        merge(cfg, overrides, "overrides")
    apply_defaults(cfg, os.environ if env is None else env)
    validate(cfg)
    return cfg


def describe_keys() -> list[tuple[str, str, str]]:
    """(key, default, doc) for every key, so the README table can be checked against code."""
    rows: list[tuple[str, str, str]] = []
    docs = _attribute_docs()
    for section, cls in [*_SECTIONS.items(), ("workers.NAME", WorkerConfig)]:
        for f in dataclasses.fields(cls):
            default: object = f.default
            if f.default is dataclasses.MISSING:
                default = (
                    f.default_factory() if f.default_factory is not dataclasses.MISSING else ""
                )
            rows.append((f"{section}.{f.name}", repr(default), docs.get((cls, f.name), "")))
    return rows


def _attribute_docs() -> dict[tuple[type, str], str]:
    import ast
    import inspect

    out: dict[tuple[type, str], str] = {}
    for cls in [*_SECTIONS.values(), WorkerConfig]:
        tree = ast.parse(inspect.getsource(cls))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for a, b in itertools.pairwise(body):
            if (
                isinstance(a, ast.AnnAssign)
                and isinstance(a.target, ast.Name)
                and isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant)
            ):
                out[(cls, a.target.id)] = str(b.value.value)
    return out


__all__ = [
    "BudgetConfig",
    "ConductorConfig",
    "Config",
    "EditsConfig",
    "TestConfig",
    "TraceConfig",
    "WorkerConfig",
    "describe_keys",
    "load_config",
    "merge",
]
