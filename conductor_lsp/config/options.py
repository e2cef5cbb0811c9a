"""Options as plain dataclasses, filled from TOML or editor settings and checked by their
type hints: the configuration's sections, and the keys a backend or provider declares
for itself in its ``Options`` class (found through its registry, plugins' too).

Each field's docstring (the string after it) is its documentation: ``field_docs`` reads
it back, so the table of keys in ``docs/configuration.md`` is generated from the code.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import textwrap
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from ..errors import ConfigError
from .values import Finite

T = TypeVar("T")


@functools.cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(Finite if hint is float else hint)


def _base(hint: Any) -> Any:
    """The type under ``Annotated`` bounds, for messages ("must be float")."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


def check_value(value: Any, hint: Any, key: str) -> Any:
    """``value`` if it has the type ``hint`` names and within its bounds (an int passes as
    a float; nothing is converted from text); else a ``ConfigError`` naming ``key``."""
    try:
        return _adapter(hint).validate_python(value, strict=True)
    except ValidationError as e:
        error = e.errors(include_url=False)[0]
    if error["type"].endswith("_type") or error["type"] in ("list_type", "string_type"):
        base = _base(hint)
        if base == list[str]:
            raise ConfigError(f"{key} must be a list of strings, got {value!r}") from None
        name = getattr(base, "__name__", str(base))
        raise ConfigError(f"{key} must be {name}, got {type(value).__name__} {value!r}") from None
    why = str(error["msg"]).removeprefix("Value error, ").removeprefix("Input should be ")
    if error["type"] == "literal_error":
        why = "one of " + why
    for long, short in _BOUNDS:
        why = why.replace(long, short)
    raise ConfigError(f"{key} must be {why}, got {value!r}") from None


_BOUNDS = (
    ("greater than or equal to", "at least"),
    ("less than or equal to", "at most"),
    ("greater than", "above"),
    ("less than", "below"),
)


def fill(obj: Any, data: Any, prefix: str, *, rest: dict[str, Any] | None = None) -> None:
    """Set ``obj``'s fields from ``data``. A key it lacks goes to ``rest`` (an owner's own
    options, checked once the owner is known), or is an error when there is no ``rest``."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix} must be a table, got {type(data).__name__}")
    hints = typing.get_type_hints(type(obj), include_extras=True)
    names = {f.name for f in dataclasses.fields(obj) if f.name != "options"}
    for key, value in data.items():
        if key in names:
            setattr(obj, key, check_value(value, hints[key], f"{prefix}.{key}"))
        elif key == "options" and rest is not None and isinstance(value, Mapping):
            rest.update(value)  # a section written back from its dataclass (asdict)
        elif rest is not None:
            rest[key] = value
        else:
            known = ", ".join(sorted(names))
            raise ConfigError(f"unknown key {prefix}.{key} (known: {known})")


def own_options(owner: object) -> type | None:
    """The ``Options`` class a backend or provider declares (None: it has no keys of its own)."""
    found = getattr(owner, "Options", None)
    return found if isinstance(found, type) else None


def check_extra(owner: object, raw: Mapping[str, Any], prefix: str, name: str) -> None:
    """Check the keys a section holds beyond the common ones against ``owner``'s own."""
    cls = own_options(owner)
    if cls is not None:
        build(cls, raw, prefix, name)
    elif raw:
        keys = ", ".join(f"{prefix}.{k}" for k in raw)
        raise ConfigError(f"unknown key {keys}: {name} has no keys of its own")


def build(cls: type[T], raw: Mapping[str, Any], prefix: str, owner: str) -> T:
    """The ``Options`` of ``owner`` (a backend or provider) from the keys its section holds
    beyond the common ones; a key it does not declare is an error that lists its own."""
    options = cls()
    try:
        fill(options, raw, prefix)
    except ConfigError as e:
        raise ConfigError(f"{e}, for {owner}") from None
    check = getattr(options, "check", None)
    if callable(check):
        check()
    return options


def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring, from the source of ``cls`` and the dataclasses it extends."""
    out: dict[str, str] = {}
    for klass in reversed([c for c in cls.__mro__ if dataclasses.is_dataclass(c)]):
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for a, b in itertools.pairwise(body):
            if (
                isinstance(a, ast.AnnAssign)
                and isinstance(a.target, ast.Name)
                and isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant)
            ):
                out[a.target.id] = " ".join(str(b.value.value).split())
    return out
