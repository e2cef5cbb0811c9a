"""Configuration: one dataclass per section, loaded from TOML or editor settings.

Order (later wins): embedded defaults, ``pyproject.toml [tool.conductor-lsp]``,
``conductor.toml`` at the workspace root (or ``--config FILE``), editor settings,
command-line flags. Each layer is checked alone (unknown keys and wrong types are errors
naming the key and the layer), then the configuration is built once from all of them:
nothing is merged into a configuration in place, and ``derive`` builds a new one.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..conductor.registry import AUTO, BACKENDS
from ..config.options import check_extra, field_docs, fill, own_options
from ..config.schema import SECTIONS, Config, LearnConfig, PriceOrigin, PriceSource, WorkerConfig
from ..episodes.log import EpisodeLog
from ..errors import ConductorError, ConfigError
from ..workers.registry import PROVIDERS
from .defaults import apply_defaults
from .prices import apply_prices
from .trust import is_trusted


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


@dataclass(frozen=True)
class Layer:
    """One layer of settings as read (plain data), named by where it came from."""

    data: typing.Mapping[str, Any]
    source: str
    #: A file inside the workspace, which anyone who wrote the repository may have written.
    in_workspace: bool = False


@dataclass
class _Checked:
    """A layer after its checks: its data (without the commands trust withheld), the
    commands withheld, and the prices it writes (a written price wins over any lookup)."""

    data: dict[str, Any]
    untrusted: list[str]
    prices: dict[str, PriceOrigin]


def _check(root: Path, layer: Layer) -> _Checked:
    """A bad value is an error naming the key and the layer it came from."""
    data = layer.data
    if not isinstance(data, dict):
        raise ConfigError(f"{layer.source}: settings must be a table")
    untrusted: list[str] = []
    try:
        _fill(Config(root=root), data)  # alone: its own types and keys
        if layer.in_workspace:
            _writes_inside(root, data)
            data, untrusted = _commands_if_trusted(root, data, layer.source)
    except ConfigError as e:
        raise ConfigError(f"{e} (in {layer.source})") from None
    return _Checked(dict(data), untrusted, _written_prices(data, layer.source))


def build_config(
    root: Path,
    layers: typing.Sequence[Layer],
    env: typing.Mapping[str, str] | None = None,
    *,
    before: Config | None = None,
) -> Config:
    """The configuration of ``root``, built once from its layers (later wins), then the
    offline defaults and prices filled in and checked across keys. ``before``: the
    configuration the layers go on (``derive``): its values (checked when it was built)
    are where the layers start, and its sources, prices and withheld commands carry
    over."""
    checked = [_check(root, layer) for layer in layers]
    cfg = Config(root=root)
    if before is not None:
        cfg.sources, cfg.untrusted = list(before.sources), list(before.untrusted)
        cfg.prices = dict(before.prices)
    start = _values(before) if before is not None else {}
    _fill(cfg, layered(start, *(c.data for c in checked)))
    for layer, c in zip(layers, checked, strict=True):
        cfg.sources.append(layer.source)
        cfg.untrusted += c.untrusted
        cfg.prices.update(c.prices)
    apply_defaults(cfg, os.environ if env is None else env)
    apply_prices(cfg)
    validate(cfg)
    return cfg


def _fill(cfg: Config, data: dict[str, Any]) -> None:
    for key, value in data.items():
        if key == "conductor":  # keys beyond the common ones are the backend's own
            fill(cfg.conductor, value, key, rest=cfg.conductor.options)
        elif key in SECTIONS:
            fill(getattr(cfg, key), value, key)
        elif key == "workers":
            if not isinstance(value, dict):
                raise ConfigError("workers must be a table of [workers.NAME] tables")
            for name, wdata in value.items():
                worker = cfg.workers.get(name) or WorkerConfig()
                fill(worker, wdata, f"workers.{name}", rest=worker.options)
                cfg.workers[name] = worker
        else:
            raise ConfigError(f"unknown key {key!r} (known: {', '.join([*SECTIONS, 'workers'])})")


#: Keys naming where a job writes (traces, episodes, the policy it learns into).
WRITES = (("trace", "dir"), ("learn", "episodes"), ("conductor", "policy"))


def _writes_inside(root: Path, data: dict[str, Any]) -> None:
    """A configuration file in the workspace (a cloned repository's, too) never makes a
    job write outside it: each key of ``WRITES`` it sets stays inside ``root``. The
    user's own files elsewhere, the command line and the editor's settings may name any
    place."""
    inside = root.resolve()
    for section, key in WRITES:
        value = data.get(section, {}).get(key) if isinstance(data.get(section), dict) else None
        if not isinstance(value, str) or not value:
            continue
        if not (root / value).resolve().is_relative_to(inside):
            raise ConfigError(
                f"{section}.{key} must name a place inside the workspace {root}, got {value!r}"
            )


def _commands_if_trusted(
    root: Path, data: dict[str, Any], source: str
) -> tuple[dict[str, Any], list[str]]:
    """A command a workspace file sets (``api_key_cmd``, ``[test] command``) runs only in
    a workspace the user trusts (``conductor-lsp trust``); otherwise the layer goes on
    without it (the test command found by looking, if any, runs instead), and ``doctor``
    and ``fix`` say so (``Config.untrusted``)."""
    tables = [("test", "command", data.get("test"))]
    tables += [(where, "api_key_cmd", t) for where, _, t in _ends(data)]
    commands = [(name, key) for name, key, t in tables if isinstance(t, dict) and t.get(key)]
    if not commands or is_trusted(root):  # the trust list is read only when needed
        return data, []
    out = copy.deepcopy(data)
    for name, key in commands:
        table = out["workers"][name.split(".", 1)[1]] if "." in name else out[name]
        table[key] = ""
    return out, [f"{name}.{key} (in {source})" for name, key in commands]


def _written_prices(data: dict[str, Any], source: str) -> dict[str, PriceOrigin]:
    """The ends whose price this layer writes: it wins over any looked up."""
    return {
        name: PriceOrigin(PriceSource.WRITTEN, source)
        for _, name, end in _ends(data)
        if isinstance(end, dict) and {"price_in", "price_out"} & end.keys()
    }


def _ends(data: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """A layer's endpoint tables as it wrote them, each with its key and its name (what
    ``Config.prices`` calls it): the conductor's, then each worker's."""
    workers = data.get("workers")
    named = list(workers.items()) if isinstance(workers, dict) else []
    return [
        ("conductor", "conductor", data.get("conductor")),
        *((f"workers.{n}", n, w) for n, w in named),
    ]


def validate(cfg: Config) -> None:
    """Checks across keys, after the defaults are filled; names the key at fault."""
    if cfg.conductor.backend not in BACKENDS:
        raise ConfigError(
            f"conductor.backend must be one of {', '.join((AUTO, *BACKENDS.names()))}, "
            f"got {cfg.conductor.backend!r}"
        )
    backend = cfg.conductor.backend
    check_extra(BACKENDS.get(backend), cfg.conductor.options, "conductor", f"backend {backend}")
    for name, w in cfg.workers.items():
        if w.provider not in PROVIDERS:
            raise ConfigError(
                f"workers.{name}.provider must be one of {', '.join(PROVIDERS.names())}, "
                f"got {w.provider!r}"
            )
        check_extra(
            PROVIDERS.get(w.provider), w.options, f"workers.{name}", f"provider {w.provider}"
        )
        if PROVIDERS.get(w.provider).requires_model and not w.model:
            raise ConfigError(f"workers.{name}.model is required for provider {w.provider}")
        if w.price_in < 0 or w.price_out < 0:
            raise ConfigError(f"workers.{name}: prices must not be negative")


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {e.start})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def load_config(
    root: Path | None = None,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    env: typing.Mapping[str, str] | None = None,
) -> Config:
    """Load the layered configuration for a workspace; see the module docstring."""
    root = (root or Path.cwd()).resolve()
    layers: list[Layer] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        tool = read_toml(pyproject).get("tool", {})
        section = tool.get("conductor-lsp") if isinstance(tool, dict) else None
        if section is not None:
            layers.append(Layer(section, f"{pyproject} [tool.conductor-lsp]", True))
    file = config_file or (root / "conductor.toml")
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    if file.is_file():
        inside = file.resolve().is_relative_to(root)
        layers.append(Layer(read_toml(file), str(file), inside))
    if overrides:
        layers.append(Layer(overrides, "overrides"))
    return build_config(root, layers, env)


def derive(
    base: Config | None,
    layer: typing.Mapping[str, Any],
    *,
    root: Path,
    env: typing.Mapping[str, str] | None = None,
) -> Config:
    """``base`` (loaded once; None: the built-in defaults) for another workspace ``root`` and
    with one more layer (a strategy, a task's test command), reading no file again: a new
    configuration built from ``base``'s values and the layer, checked like any other; a
    ``workers`` table in it is the whole pool."""
    if base is not None and "workers" in layer:  # the layer's pool replaces the base's
        prices = {k: v for k, v in base.prices.items() if k == "conductor"}
        base = dataclasses.replace(base, workers={}, prices=prices)
    return build_config(root.resolve(), [Layer(dict(layer), "overrides")], env, before=base)


def _values(cfg: Config) -> dict[str, Any]:
    """A configuration's values as a layer (each section's fields, its options among them)."""
    out = {name: dataclasses.asdict(getattr(cfg, name)) for name in SECTIONS}
    out["workers"] = {n: dataclasses.asdict(w) for n, w in cfg.workers.items()}
    return out


def describe_keys() -> list[tuple[str, str, str]]:
    """(key, default, doc) for every key, so the table in ``docs/configuration.md`` is
    generated from the code: the sections', then the keys each built-in backend and
    provider declares (its ``Options``), once per key with the owners that have it."""
    rows: list[tuple[str, str, str]] = []
    for section, cls in [*SECTIONS.items(), ("workers.NAME", WorkerConfig)]:
        rows += _rows(section, cls, field_docs(cls))
        registry = BACKENDS if section == "conductor" else PROVIDERS
        if section not in ("conductor", "workers.NAME"):
            continue
        owners: dict[str, list[str]] = {}
        found: dict[str, tuple[str, str, str]] = {}
        for name in registry.names():
            own = own_options(registry.get(name))
            if own is None:
                continue
            for row in _rows(section, own, field_docs(own)):
                found.setdefault(row[0], row)
                owners.setdefault(row[0], []).append(name)
        rows += [(k, d, f"{doc} ({', '.join(owners[k])})") for k, d, doc in found.values()]
    return rows


def _rows(section: str, cls: type, docs: dict[str, str]) -> list[tuple[str, str, str]]:
    out = []
    for f in dataclasses.fields(cls):
        if f.name == "options":
            continue
        default: object = f.default
        if f.default is dataclasses.MISSING:
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else ""
        out.append((f"{section}.{f.name}", repr(default), docs.get(f.name, "")))
    return out


__all__ = [
    "Layer",
    "build_config",
    "derive",
    "describe_keys",
    "layered",
    "load_config",
    "read_toml",
    "validate",
]


def job_layer(
    test: str = "", max_iterations: int | None = None, budget_usd: float | None = None
) -> dict[str, Any]:
    """A fix job's own settings (the CLI's flags, the MCP door's arguments) as the last
    configuration layer; what is not given is left to the files."""
    out: dict[str, Any] = {"test": {"command": test}} if test else {}
    budget: dict[str, Any] = {}
    if max_iterations is not None:
        budget["max_iterations"] = max_iterations
    if budget_usd is not None:
        budget["max_cost"] = budget_usd
    if budget:
        out["budget"] = budget
    return out


def workspace_episodes(root: Path) -> EpisodeLog:
    """The workspace's episode log, even when its configuration does not load (an undo
    must not wait on a broken file): then the default place."""
    try:
        learn = load_config(root).learn
    except ConductorError:
        return EpisodeLog(root / LearnConfig().episodes, root=root)
    return EpisodeLog(root / learn.episodes if learn.record else None, root=root)
