"""Offsets in Python strings <-> LSP positions, in the negotiated encoding."""

from __future__ import annotations

from lsprotocol import types


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def position_at(text: str, offset: int, encoding: str = "utf-16") -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=_units(text[start:offset], encoding))


def offset_at(text: str, pos: types.Position, encoding: str = "utf-16") -> int:
    """Clamped: positions past a line's end or the text's end land on the end."""
    start = 0
    for _ in range(pos.line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    end = text.find("\n", start)
    line = text[start : end if end >= 0 else len(text)]
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return start + i
        units += _units(ch, encoding)
    return start + len(line)


def minimal_edit(old: str, new: str, encoding: str = "utf-16") -> types.TextEdit:
    """One TextEdit turning ``old`` into ``new``, touching only what changed."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    rng = types.Range(
        start=position_at(old, prefix, encoding), end=position_at(old, len(old) - suffix, encoding)
    )
    return types.TextEdit(range=rng, new_text=new[prefix : len(new) - suffix])
