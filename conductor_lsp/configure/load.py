"""Configuration: one dataclass per section, loaded from TOML or editor settings.

Order (later wins): embedded defaults, ``pyproject.toml [tool.conductor-lsp]``,
``conductor.toml`` at the workspace root (or ``--config FILE``), editor settings,
command-line flags. Unknown keys and wrong types are errors naming the key.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import itertools
import os
import textwrap
import tomllib
import typing
from pathlib import Path
from typing import Any

from ..conductor.registry import AUTO, BACKENDS
from ..config.schema import SECTIONS, Config, WorkerConfig
from ..errors import ConfigError
from ..local_models import check_adapter
from ..workers.registry import PROVIDERS
from .defaults import apply_defaults

#: The most steps a plan may be configured to have.
MAX_STEPS_LIMIT = 20


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


def layered(base: typing.Mapping[str, Any], *more: typing.Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge settings layers (later wins), as plain data, before ``merge`` checks them."""
    out: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for layer in more:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = layered(out[key], value)
            else:
                out[key] = value
    return out


def merge(cfg: Config, data: dict[str, Any], source: str) -> Config:
    """Merge one layer of settings (already parsed) into ``cfg`` in place."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: settings must be a table")
    for key, value in data.items():
        if key in SECTIONS:
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
                f"unknown key {key!r} in {source} (known: {', '.join([*SECTIONS, 'workers'])})"
            )
    cfg.sources.append(source)
    return cfg


def validate(cfg: Config) -> None:
    """Checks across keys, after the defaults are filled; names the key at fault."""
    if cfg.conductor.backend not in BACKENDS:
        raise ConfigError(
            f"conductor.backend must be one of {', '.join((AUTO, *BACKENDS.names()))}, "
            f"got {cfg.conductor.backend!r}"
        )
    if cfg.conductor.adapter:
        if cfg.conductor.backend != "transformers":
            raise ConfigError(
                'conductor.adapter works with backend = "transformers" (for mlx, point '
                "conductor.model at the merged folder that train writes)"
            )
        check_adapter(cfg.conductor.adapter)
    if not 0 < cfg.edits.fuzzy_threshold <= 1:
        raise ConfigError("edits.fuzzy_threshold must be above 0 and at most 1")
    if not 1 <= cfg.conductor.max_steps <= MAX_STEPS_LIMIT:
        raise ConfigError(f"conductor.max_steps must be between 1 and {MAX_STEPS_LIMIT}")
    for name, w in cfg.workers.items():
        if w.provider not in PROVIDERS:
            raise ConfigError(
                f"workers.{name}.provider must be one of {', '.join(PROVIDERS.names())}, "
                f"got {w.provider!r}"
            )
        if PROVIDERS.get(w.provider).requires_model and not w.model:
            raise ConfigError(f"workers.{name}.model is required for provider {w.provider}")
        if w.concurrency < 1:
            raise ConfigError(f"workers.{name}.concurrency must be at least 1")
        if w.max_retries < 0:
            raise ConfigError(f"workers.{name}.max_retries must not be negative")
        if w.price_in < 0 or w.price_out < 0:
            raise ConfigError(f"workers.{name}: prices must not be negative")
    if cfg.test.jobs < 1:
        raise ConfigError("test.jobs must be at least 1")
    if cfg.search.samples < 1:
        raise ConfigError("search.samples must be at least 1")
    if cfg.search.temperature < 0:
        raise ConfigError("search.temperature must not be negative")
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


def derive(
    base: Config | None,
    layer: typing.Mapping[str, Any],
    *,
    root: Path,
    env: typing.Mapping[str, str] | None = None,
) -> Config:
    """``base`` (loaded once; None: the built-in defaults) for another workspace ``root`` and
    with one more layer (a strategy, a task's test command), reading no file again. The
    layer is checked like any other; a ``workers`` table in it is the whole pool."""
    cfg = copy.deepcopy(base) if base is not None else Config()
    cfg.root = root.resolve()
    if "workers" in layer:
        cfg.workers = {}
    merge(cfg, dict(layer), "overrides")
    apply_defaults(cfg, os.environ if env is None else env)
    validate(cfg)
    return cfg


def describe_keys() -> list[tuple[str, str, str]]:
    """(key, default, doc) for every key, so the README table can be checked against code."""
    rows: list[tuple[str, str, str]] = []
    docs = _attribute_docs()
    for section, cls in [*SECTIONS.items(), ("workers.NAME", WorkerConfig)]:
        for f in dataclasses.fields(cls):
            default: object = f.default
            if f.default is dataclasses.MISSING:
                default = (
                    f.default_factory() if f.default_factory is not dataclasses.MISSING else ""
                )
            rows.append(
                (
                    f"{section}.{f.name}",
                    repr(default),
                    " ".join(docs.get((cls, f.name), "").split()),
                )
            )
    return rows


def _attribute_docs() -> dict[tuple[type, str], str]:
    """Each field's docstring, read from the source; inherited fields listed under each section."""
    out: dict[tuple[type, str], str] = {}
    for leaf in [*SECTIONS.values(), WorkerConfig]:
        for cls in reversed([c for c in leaf.__mro__ if dataclasses.is_dataclass(c)]):
            for name, doc in _field_docs(cls).items():
                out[(leaf, name)] = doc
    return out


def _field_docs(cls: type) -> dict[str, str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out: dict[str, str] = {}
    for a, b in itertools.pairwise(body):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
        ):
            out[a.target.id] = str(b.value.value)
    return out


__all__ = [
    "derive",
    "describe_keys",
    "layered",
    "load_config",
    "merge",
    "read_toml",
    "validate",
]
