"""One converter for the records: each dataclass is written as its fields, under their
own names, and read back through the same types (cattrs), so a field cannot drift from
its key. Only the pre-version-3 episode layout has a reader of its own (``records``)."""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ..errors import EpisodeFormatError
from ..plan import Access

T = TypeVar("T")


def _access(value: Any, _: Any) -> Access:
    if value == "all":
        return "all"
    if isinstance(value, list | tuple):
        return tuple(int(i) for i in value)
    raise ValueError(f"access must be 'all' or a list of step numbers, got {value!r}")


def _texts(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):  # a string would be read as its characters
        raise ValueError(f"expected a list of strings, got {type(value).__name__}")
    return tuple(str(v) for v in value)


def make_converter() -> cattrs.Converter:
    """Tuples written as lists, enums as their values, a step's access as "all" or its
    step numbers; unknown keys ignored (a newer writer may add some)."""
    c = cattrs.Converter(forbid_extra_keys=False)
    c.register_structure_hook(Access, _access)
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


def read(data: Any, cls: type[T], what: str) -> T:
    """``data`` as a ``cls``; ``EpisodeFormatError`` naming ``what`` when it is not one."""
    if not isinstance(data, dict):
        raise EpisodeFormatError(f"{what} is not a JSON object")
    fields = {k: v for k, v in data.items() if k != "type"}
    try:
        return CONVERTER.structure(fields, cls)
    except cattrs.BaseValidationError as e:
        why = "; ".join(cattrs.transform_error(e))
        raise EpisodeFormatError(f"{what} is damaged: {why}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise EpisodeFormatError(f"{what} is damaged: {e}") from None


def as_data(record: object) -> dict[str, Any]:
    """``record``'s fields as JSON data (for a trace line)."""
    data: dict[str, Any] = CONVERTER.unstructure(record)
    return data
