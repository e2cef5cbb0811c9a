"""One converter for every record the package writes (episodes, verdicts, plans, usage,
policies): each dataclass is written as its fields, under their own names, and read back
through the same types (cattrs), so a field cannot drift from its key. Only layouts from
before this (the pre-version-3 episode) have readers of their own, beside their records.
A type that needs a hook registers it where it is defined (``plan.Access``)."""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

from ..errors import ConductorError, EpisodeFormatError

T = TypeVar("T")


def _texts(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):  # a string would be read as its characters
        raise ValueError(f"expected a list of strings, got {type(value).__name__}")
    return tuple(str(v) for v in value)


def make_converter() -> cattrs.Converter:
    """Tuples written as lists, enums as their values; unknown keys ignored (a newer
    writer may add some)."""
    c = cattrs.Converter(forbid_extra_keys=False)
    c.register_structure_hook_func(lambda t: t == tuple[str, ...], _texts)
    c.register_unstructure_hook(tuple, lambda t: [c.unstructure(x) for x in t])
    return c


CONVERTER = make_converter()


def without(cls: type, *fields: str) -> None:
    """Write and read ``cls`` without ``fields`` (joined in from other records)."""
    omit: dict[str, Any] = {name: override(omit=True) for name in fields}
    CONVERTER.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, CONVERTER, **omit))
    CONVERTER.register_structure_hook(cls, make_dict_structure_fn(cls, CONVERTER, **omit))


def write(record: object, kind: str) -> dict[str, Any]:
    """``record`` as JSON data, tagged with its ``type``."""
    data: dict[str, Any] = CONVERTER.unstructure(record)
    return {"type": kind, **data}


def _why(exc: BaseException, type: Any) -> str:
    """cattrs' words for a failed field, with a record's own check's reason kept (it
    says "invalid value" for any ``ValueError``, dropping what the record said)."""
    said = format_exception(exc, type)
    if isinstance(exc, ValueError) and exc.args and type is None:
        return f"{said} ({exc})"
    return said


def read(data: Any, cls: type[T], what: str, error: type[ConductorError] = EpisodeFormatError) -> T:
    """``data`` as a ``cls``; ``error`` naming ``what`` when it is not one."""
    if not isinstance(data, dict):
        raise error(f"{what} is not a JSON object")
    fields = {k: v for k, v in data.items() if k != "type"}
    try:
        return CONVERTER.structure(fields, cls)
    except cattrs.BaseValidationError as e:
        why = "; ".join(cattrs.transform_error(e, format_exception=_why))
        raise error(f"{what} is damaged: {why}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise error(f"{what} is damaged: {e}") from None


def as_data(record: object) -> dict[str, Any]:
    """``record``'s fields as JSON data (for a trace line)."""
    data: dict[str, Any] = CONVERTER.unstructure(record)
    return data
