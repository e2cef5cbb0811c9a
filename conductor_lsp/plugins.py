"""Name -> "module:Class" registries: where backends and providers plug in.

A registry imports an entry only when it is asked for, so a backend's heavy
dependencies (torch, mlx) load only when configured. Built-in entries and
third-party ones go through the same door, ``register``: the built-ins from the
table their registry lists, plugins from the entry points of the registry's group
(``conductor_lsp.providers``, ``conductor_lsp.backends``) of any installed
distribution, read once, on first use. A plugin never replaces a built-in.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from typing import Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


log = logging.getLogger("conductor_lsp")


class Registry(Generic[T]):
    """One seam: ``kind`` names it in error messages ("provider", "conductor backend"),
    ``group`` is the entry-point group plugins declare their classes in."""

    def __init__(
        self, kind: str, group: str, builtins: dict[str, str], declares: tuple[str, ...] = ()
    ) -> None:
        self.kind = kind
        self.group = group
        #: Class attributes every entry must declare (its capabilities), checked on loading.
        self.declares = declares
        self._entries: dict[str, str | T] = {}
        self._plugins_read = False
        for name, target in builtins.items():
            self.register(name, target)

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        for ep in importlib.metadata.entry_points(group=self.group):
            if ep.name in self._entries:
                log.warning(
                    "%s %r from %s ignored: a built-in has that name", self.kind, ep.name, ep.value
                )
                continue
            self.register(ep.name, ep.value)

    def names(self) -> tuple[str, ...]:
        self._read_plugins()
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        self._read_plugins()
        return name in self._entries

    def register(self, name: str, target: str | T) -> None:
        """Add or replace an entry: a class, or "module:Class" to import on first use."""
        if not isinstance(target, str):
            self._declared(name, target, getattr(target, "__module__", "?"))
        self._entries[name] = target

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        self._read_plugins()
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
            self._entries[name] = self._declared(name, loaded, target)
            return loaded
        return target

    def _declared(self, name: str, loaded: T, where: str) -> T:
        """``loaded`` when it declares what every entry declares; else why not."""
        missing = [a for a in self.declares if not hasattr(loaded, a)]
        if missing:
            raise ConfigError(
                f"{self.kind} {name!r} from {where} does not declare {', '.join(missing)} "
                f"(the class attributes every {self.kind} declares: {', '.join(self.declares)})"
            )
        return loaded
