"""The pure edits API: (file texts, worker output) -> (new texts | errors). No I/O.

The LSP server turns the same result into a WorkspaceEdit; the CLI writes it to
disk; benchmarks call it directly. Line endings and the final newline of each
file are kept as they were.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import EditError
from .blocks import apply_block, is_python, resolve
from .format import REPEATS_EXAMPLE, repeats_example
from .match import LineIndex, Match, find_match
from .model import EditFailure, EditResult, EditsConfig, FileEdit
from .parse import parse_edits
from .paths import fold_path, normalize


@dataclass
class _Doc:
    original: str
    newline: str
    text: str


def edited_paths(edits: Sequence[FileEdit], targets: Sequence[str] = ()) -> list[str]:
    """The files to load before applying: those the edits name, and the task's targets."""
    seen: dict[str, None] = {}
    for path in [*(e.path for e in edits), *targets]:
        if path:
            seen.setdefault(normalize(path), None)
    return list(seen)


#: A caller's veto on one proposed change: (path, old text or None, new text) -> why not, or ''.
Guard = Callable[[str, str | None, str], str]


def apply_output(
    files: Mapping[str, str | None],
    output: str,
    config: EditsConfig | None = None,
    *,
    targets: Sequence[str] = (),
    guard: Guard | None = None,
) -> EditResult:
    """Parse ``output`` and apply it to ``files`` (path -> text, None if absent).

    ``targets`` are the files under repair (loaded in ``files``): with exactly one, edits
    without a path go to it; wrong paths are corrected to the target of that name."""
    edits, failures = parse_edits(output)
    result = apply_edits(files, edits, config, targets=targets, guard=guard)
    result.failures[:0] = failures
    return result


def apply_edits(
    files: Mapping[str, str | None],
    edits: Sequence[FileEdit],
    config: EditsConfig | None = None,
    *,
    targets: Sequence[str] = (),
    guard: Guard | None = None,
) -> EditResult:
    """Apply parsed edits; any failure leaves ``new_texts`` empty (all or nothing).
    ``guard`` may refuse a change it does not allow (the fix loop's protected tests)."""
    threshold = (config or EditsConfig()).fuzzy_threshold
    result = EditResult()
    edits = [e for e in edits if not _invalid_unicode(e, result) and not _example(e, result)]
    resolved, failures, notes = resolve(edits, files, targets)
    result.failures += failures
    result.notes += notes
    by_path: dict[str, list[FileEdit]] = {}
    for e in resolved:
        by_path.setdefault(normalize(e.path), []).append(e)
    spellings: dict[str, str] = {}
    for path in by_path:  # "Calc.py" and "calc.py" are one file on macOS and Windows
        other = spellings.setdefault(fold_path(path), path)
        if other != path:
            result.failures.append(
                EditFailure(path, f"{path} and {other} name the same file where case is ignored")
            )
    for path, group in by_path.items():
        if path not in files:
            result.failures.append(
                EditFailure(
                    path, "file was not loaded (refused or unreadable)", group[0].source_line
                )
            )
            continue
        _apply_file(path, files[path], group, threshold, result)
    for path, new in result.proposed.items():
        why = "the new text holds a NUL byte (binary files are refused)" if "\0" in new else ""
        why = why or (guard(path, files.get(path), new) if guard else "")
        if why:
            result.failures.append(EditFailure(path, why, by_path[path][0].source_line))
    return result


def _example(edit: FileEdit, result: EditResult) -> bool:
    """An edit that returns the format's example: refused, saying so."""
    what = repeats_example(edit.search, edit.replace)
    if what:
        why = REPEATS_EXAMPLE.format(what=what)
        result.failures.append(EditFailure(edit.path, why, edit.source_line))
    return bool(what)


def _invalid_unicode(edit: FileEdit, result: EditResult) -> bool:
    """Whether ``edit`` holds a lone surrogate (JSON lets a model send one), which no file
    can be written with; it is refused as a failure, never a traceback."""
    try:
        (edit.path + edit.search + edit.replace).encode("utf-8")
    except UnicodeEncodeError:
        why = "the edit holds text that is not valid Unicode (a lone surrogate)"
        result.failures.append(EditFailure(edit.path or "(answer)", why, edit.source_line))
        return True
    return False


def _apply_file(
    path: str, original: str | None, group: list[FileEdit], threshold: float, result: EditResult
) -> None:
    wholes = [e for e in group if e.kind in ("whole", "block")]
    if wholes and len(group) > 1:
        result.failures.append(
            EditFailure(path, "mixes a whole-file rewrite with other edits", wholes[0].source_line)
        )
        return
    if original is None:
        creating = wholes or (len(group) == 1 and not group[0].search.strip())
        if not creating:
            result.failures.append(
                EditFailure(
                    path,
                    "file does not exist; to create it, use an empty SEARCH or a whole file",
                    group[0].source_line,
                )
            )
            return
        result.proposed[path] = group[0].replace
        result.proposed_new.add(path)
        result.matches.append("create")
        return
    newline = "\r\n" if "\r\n" in original else "\n"
    doc = _Doc(original, newline, original.replace("\r\n", "\n"))
    checked = wholes and (wholes[0].kind == "block" or is_python(path))
    if wholes and checked:
        # A bare block, or a "whole file" of Python that may hold only the fixed function.
        try:
            named = wholes[0].kind != "block"
            new, how = apply_block(path, doc.text, wholes[0].replace, named=named)
            how = f"block({how})" if wholes[0].kind == "block" else how
        except EditError as err:
            result.failures.append(EditFailure(path, str(err), wholes[0].source_line))
            return
        result.matches.append(how)
    elif wholes:
        new = wholes[0].replace
        result.matches.append("whole")
    else:
        spliced = _splice(path, doc, group, threshold, result)
        if spliced is None:
            return
        new = spliced
    if doc.text.endswith("\n") and new and not new.endswith("\n"):
        new += "\n"
    elif not doc.text.endswith("\n") and new.endswith("\n") and doc.text:
        new = new[:-1]
    new = new.replace("\n", newline) if newline != "\n" else new
    if new != original:
        result.proposed[path] = new


def _splice(
    path: str, doc: _Doc, group: list[FileEdit], threshold: float, result: EditResult
) -> str | None:
    index = LineIndex(doc.text)
    matches: list[tuple[Match, FileEdit]] = []
    ok = True
    for e in group:
        if not e.search.strip():
            result.failures.append(
                EditFailure(
                    path,
                    "empty SEARCH on an existing file: quote the lines to replace",
                    e.source_line,
                )
            )
            ok = False
            continue
        try:
            m = find_match(index, e.search, e.replace, hint_line=e.hint_line, threshold=threshold)
        except EditError as err:
            result.failures.append(EditFailure(path, str(err), e.source_line))
            ok = False
            continue
        matches.append((m, e))
    if not ok:
        return None
    matches.sort(key=lambda me: me[0].start)
    for (a, ea), (b, eb) in itertools.pairwise(matches):
        if b.start < a.end:
            result.failures.append(
                EditFailure(
                    path,
                    f"edits at output lines {ea.source_line} and {eb.source_line} overlap",
                    eb.source_line,
                )
            )
            return None
    pieces = []
    pos = 0
    for m, _ in matches:
        pieces.append(doc.text[pos : m.start])
        pieces.append(m.replacement)
        pos = m.end
        result.matches.append(m.how)
    pieces.append(doc.text[pos:])
    return "".join(pieces)
