"""Name -> "module:Class" registries: where backends and providers plug in.

A registry imports an entry only when it is asked for, so a backend's heavy
dependencies (torch, mlx) load only when configured. Built-in entries and
third-party ones are registered the same way.
"""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """One seam: ``kind`` names it in error messages ("provider", "conductor backend")."""

    def __init__(self, kind: str, entries: dict[str, str]) -> None:
        self.kind = kind
        self._entries: dict[str, str | T] = dict(entries)

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def register(self, name: str, target: str | T) -> None:
        """Add or replace an entry: a class, or "module:Class" to import on first use."""
        self._entries[name] = target

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        if name not in self._entries:
            known = ", ".join(self._entries)
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {known})")
        target = self._entries[name]
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            try:
                loaded: T = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as e:
                raise ConfigError(
                    f"{self.kind} {name!r} cannot be loaded from {target}: {e}"
                ) from e
            self._entries[name] = loaded
            return loaded
        return target
