"""Command arguments as typed attrs classes, structured by the server's lsprotocol converter.

A hook per class keeps the messages for bad arguments as clear as hand-written
checks ("uri (a string) is required"), where cattrs alone would say "While
structuring EditArgs (1 sub-exception)". Plain types are checked strictly: cattrs
would quietly turn ``5`` into ``"5"``.
"""

from __future__ import annotations

import typing
from types import UnionType
from typing import Any, TypeVar

import attrs
import cattrs
from lsprotocol import types

T = TypeVar("T")
_NOUNS: dict[Any, str] = {str: "a string", int: "an integer", bool: "true or false"}
_SHAPES: dict[Any, str] = {
    types.Range: "range must be {start: {line, character}, end: {line, character}}",
}


@attrs.define
class DiagnosticArg:
    message: str = ""
    line: int = 0
    source: str = ""
    code: str = ""


@attrs.define
class EditArgs:
    """conductor.edit (once conductor.fix): a document, the problem's range and diagnostics."""

    uri: str
    range: types.Range | None = None
    diagnostics: list[DiagnosticArg] = attrs.field(factory=list)
    instruction: str = ""


@attrs.define
class RewriteArgs:
    """conductor.rewrite: a document and the selection to implement or rewrite."""

    uri: str
    range: types.Range
    instruction: str = ""


@attrs.define
class FixTestsArgs:
    """conductor.fixTests: the whole workspace; the uri only says where it was asked from."""

    uri: str = ""
    instruction: str = ""


@attrs.define
class JobArgs:
    """conductor.cancel, conductor.undo, conductor.showPlan: one job, or the latest/all."""

    job_id: str | None = None


@attrs.define
class ReviewArgs:
    """conductor.reviewDone: what the user kept of the hunks a ``conductor/review``
    notification showed; reasons by hunk index; ``again``: another try with them."""

    id: str
    accepted: list[int] = attrs.field(factory=list)
    reasons: dict[str, str] = attrs.field(factory=dict)
    again: bool = False


@attrs.define
class CandidateArgs:
    """conductor.applyCandidate: candidate ``index`` of a fix job (default: the latest)."""

    index: int
    job_id: str | None = None


ARGUMENT_CLASSES = (
    DiagnosticArg,
    EditArgs,
    RewriteArgs,
    FixTestsArgs,
    JobArgs,
    ReviewArgs,
    CandidateArgs,
)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _value(converter: cattrs.Converter, key: str, value: Any, hint: Any) -> Any:
    optional = typing.get_origin(hint) in (typing.Union, UnionType) and type(None) in (
        typing.get_args(hint)
    )
    inner = next(a for a in typing.get_args(hint) if a is not type(None)) if optional else hint
    if value is None and optional:
        return None
    if inner in _NOUNS:
        if inner is str and optional and isinstance(value, int) and not isinstance(value, bool):
            return str(value)  # a job id may be a number
        ok = isinstance(value, inner) and not (inner is int and isinstance(value, bool))
        if not ok:
            raise ValueError(f"{key} must be {_NOUNS[inner]}, got {type(value).__name__}")
        return value
    try:
        return converter.structure(value, inner)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as e:
        detail = (
            "; ".join(cattrs.transform_error(e)) if isinstance(e, cattrs.BaseValidationError) else e
        )
        shape = _SHAPES.get(inner, f"{key} is not valid")
        raise ValueError(f"{shape}: {detail}") from None


def structure_arguments(converter: cattrs.Converter, data: Any, cls: type[T]) -> T:
    """``cls`` from a command's JSON argument; ``ValueError`` naming the key at fault."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in attrs.fields(cls):  # type: ignore[arg-type]
        key = camel(f.name)
        if key not in data:
            if f.default is attrs.NOTHING:
                noun = _NOUNS.get(hints[f.name])
                raise ValueError(f"{key} ({noun}) is required" if noun else f"{key} is required")
            continue
        values[f.name] = _value(converter, key, data[key], hints[f.name])
    return cls(**values)


def register(converter: cattrs.Converter) -> cattrs.Converter:
    """Teach the server's converter the argument classes (pygls structures typed params)."""
    for cls in ARGUMENT_CLASSES:
        converter.register_structure_hook(
            cls, lambda data, c, _conv=converter: structure_arguments(_conv, data, c)
        )
    return converter
