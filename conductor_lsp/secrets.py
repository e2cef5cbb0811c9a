"""API keys: one documented lookup order, never shown anywhere.

Order: ``api_key_cmd`` (a command whose stdout is the key), then the variable
named by ``api_key_env``, then the provider's usual variable.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError

REDACTED = "***"


class Secret:
    """A key that prints as ``***`` in reprs, logs, traces and errors."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def resolve_key(
    *,
    api_key_cmd: str = "",
    api_key_env: str = "",
    default_envs: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    owner: str = "",
) -> Secret | None:
    """The key for one worker or conductor, or None when none is configured."""
    env = os.environ if env is None else env
    if api_key_cmd:
        try:
            out = subprocess.run(
                shlex.split(api_key_cmd), capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ConfigError(f"{owner}.api_key_cmd could not run: {type(e).__name__}") from None
        if out.returncode != 0:
            raise ConfigError(f"{owner}.api_key_cmd exited with status {out.returncode}")
        key = out.stdout.strip()
        if not key:
            raise ConfigError(f"{owner}.api_key_cmd printed nothing")
        return Secret(key)
    for var in [api_key_env] if api_key_env else list(default_envs):
        if env.get(var):
            return Secret(env[var].strip())
    return None


def scrub(text: str, secrets: Iterable[Secret | None]) -> str:
    """Remove every known key value from ``text`` (errors, response bodies, traces)."""
    for s in secrets:
        if s and len(s.reveal()) >= 4:
            text = text.replace(s.reveal(), REDACTED)
    return text


_SECRET_FIELDS = re.compile(r"(authorization|api[-_]?key|x-goog-api-key|token|secret)", re.I)


def redact(value: Any, secrets: Iterable[Secret | None]) -> Any:
    """Drop secret-looking fields and scrub key values anywhere in ``value``."""
    secrets = list(secrets)
    if isinstance(value, dict):
        return {
            k: REDACTED
            if _SECRET_FIELDS.search(str(k)) and isinstance(v, str)
            else redact(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, secrets) for v in value]
    if isinstance(value, str):
        return scrub(value, secrets)
    return value
