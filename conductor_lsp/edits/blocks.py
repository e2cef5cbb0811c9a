"""Edits small models write: no path, a wrong path, or a bare code block.

Small coder models often answer with the whole corrected file (or just the fixed
function) in one fenced block without a path, leave the path off a SEARCH/REPLACE
block, or copy a path that does not exist. When the task has a single file under
repair, such answers are read generously, but never blindly: a bare block must
parse as the same language and keep most of the file's top-level names, or hold
only definitions: the file's own replace theirs, new ones (a helper, what a feature
adds) go beside them; a block of new ones alone is added only under the file's path,
and never when a new name looks like a renamed one of the file's. A wrong path is
corrected only to the one task file of the same name. Every such reading is said
in ``EditResult.notes``. Pure: no I/O.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from ..errors import EditError
from .model import EditFailure, FileEdit
from .paths import normalize

#: Share of the file's top-level names a bare block must keep to replace the whole file.
KEEP_NAMES = 0.6
#: Share of the file's distinct lines a bare block in another language must keep.
KEEP_LINES = 0.5
_PYTHON = (".py", ".pyi")


def resolve(
    edits: Sequence[FileEdit], files: Mapping[str, str | None], targets: Sequence[str]
) -> tuple[list[FileEdit], list[EditFailure], list[str]]:
    """Give path-less edits their file and correct wrong paths; (edits, failures, notes)."""
    targets = [normalize(t) for t in targets]
    notes: list[str] = []
    failures: list[EditFailure] = []
    blocks = [e for e in edits if e.kind == "block"]
    out = [e for e in edits if e.kind != "block"]
    if not out and blocks and targets:
        if len(blocks) > 1:
            failures.append(
                EditFailure(
                    "?",
                    f"{len(blocks)} code blocks without a file path: put the path on the line "
                    "before the block, or answer with SEARCH/REPLACE blocks",
                    blocks[1].source_line,
                )
            )
        elif len(targets) == 1:
            out.append(dataclasses.replace(blocks[0], path=targets[0]))
        else:
            failures.append(
                EditFailure(
                    "?",
                    "a code block without a file path, and the task has several files "
                    f"({', '.join(targets)}): put the path on the line before the block",
                    blocks[0].source_line,
                )
            )
    resolved: list[FileEdit] = []
    for e in out:
        if not e.path:
            if len(targets) != 1:
                failures.append(
                    EditFailure("?", "SEARCH/REPLACE block without a file path", e.source_line)
                )
                continue
            resolved.append(dataclasses.replace(e, path=targets[0]))
            continue
        path = normalize(e.path)
        fixed = _did_you_mean(path, files, targets)
        if fixed:
            notes.append(f"{path} does not exist; used {fixed} (the task's file of that name)")
        elif e.kind in ("replace", "diff") and len(targets) == 1 and _missing(path, files):
            # A copied placeholder ("path/to/file.py") on a change to the only file under
            # repair: its SEARCH text must still match there, so nothing is guessed blindly.
            fixed = targets[0]
            notes.append(f"{path} does not exist; used {fixed}, the only file under repair")
        if not fixed:
            resolved.append(e)
            continue
        kind = "block" if e.kind == "whole" else e.kind  # a rewrite of a real file: check it
        resolved.append(dataclasses.replace(e, path=fixed, kind=kind))
    return resolved, failures, notes


def _missing(path: str, files: Mapping[str, str | None]) -> bool:
    return files.get(path) is None


def _did_you_mean(path: str, files: Mapping[str, str | None], targets: Sequence[str]) -> str:
    if path in targets or not _missing(path, files):
        return ""
    name = PurePosixPath(path).name
    same = [t for t in targets if PurePosixPath(t).name == name and t != path]
    return same[0] if len(same) == 1 else ""


def is_python(path: str) -> bool:
    return PurePosixPath(path).suffix in _PYTHON


def apply_block(path: str, original: str, block: str, *, named: bool = False) -> tuple[str, str]:
    """(new text, how) for a code block taken as ``path``'s new content: the whole file if
    it plausibly is that file, its definitions if it holds only some of them (and new
    ones beside them; only new ones when the answer ``named`` the path); EditError saying
    why otherwise."""
    if is_python(path):
        return _python_block(path, original, block, named)
    if path.endswith(".json"):
        try:
            json.loads(block)
        except ValueError as e:
            raise EditError(f"the code block is not valid JSON for {path}: {e}") from None
    old = {line.strip() for line in original.splitlines() if line.strip()}
    kept = sum(1 for line in old if line in {b.strip() for b in block.splitlines()})
    if old and kept < KEEP_LINES * len(old):
        raise EditError(
            f"the code block keeps {kept} of {len(old)} lines of {path}, so it is not that "
            "file: put the path before a whole file, or use SEARCH/REPLACE blocks"
        )
    return block, "whole"


def _names(tree: ast.Module) -> list[str]:
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(node.name)
        elif isinstance(node, ast.Assign):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.append(node.target.id)
    return out


def _python_block(path: str, original: str, block: str, named: bool) -> tuple[str, str]:
    try:
        new_tree = ast.parse(block)
    except SyntaxError as e:
        raise EditError(
            f"the code block is not valid Python (line {e.lineno}: {e.msg}), so it cannot "
            f"replace {path}"
        ) from None
    try:
        old_tree = ast.parse(original)
    except SyntaxError:
        old_tree = None
    old_names = _names(old_tree) if old_tree is not None else []
    new_names = set(_names(new_tree))
    kept = [n for n in old_names if n in new_names]
    if not old_names or len(kept) >= KEEP_NAMES * len(old_names):
        return block, "whole"
    if old_tree is not None:
        spliced = _splice_definitions(path, original, old_tree, block, new_tree)
        if spliced is not None and (named or spliced[1].startswith("defs:")):
            return spliced
    # The words are kept as recorded runs have them: a later round's prompt quotes them.
    raise EditError(
        f"the code block keeps {len(kept)} of the {len(old_names)} top-level names of {path} "
        f"({', '.join(old_names[:8])}): send the whole file, SEARCH/REPLACE blocks, or only "
        "complete definitions the file already has"
    )


def statement_span(node: ast.stmt) -> tuple[int, int]:
    """0-based [first, last) lines of a top-level statement, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)]) - 1
    return first, node.end_lineno or node.lineno


def _splice_definitions(
    path: str, original: str, old_tree: ast.Module, block: str, new_tree: ast.Module
) -> tuple[str, str] | None:
    """The file with the block's definitions spliced in: those the file has replace
    theirs, new ones (a helper, a function a feature adds) go beside the definition the
    block put them next to, or at the end. None when the block holds anything but
    definitions, imports and a ``__main__`` demo (left out); EditError when a new name
    looks like a renamed one of the file's or is a test."""
    old_defs = {n.name: n for n in old_tree.body if isinstance(n, _DEFS)}
    new_lines = block.splitlines(keepends=True)
    parts = _Parts()
    for node in new_tree.body:
        a, b = statement_span(node)
        text = "".join(new_lines[a:b])
        text = text if text.endswith("\n") else text + "\n"
        if isinstance(node, _DEFS) and node.name in old_defs:
            parts.replace(node.name, text)
        elif isinstance(node, _DEFS):
            parts.add(node.name, text)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if text.strip() not in original and not _imports_itself(node, path):
                parts.imports.append(text.strip() + "\n")
        elif not _is_demo(node):
            return None
    if not parts.replaced and not parts.added:
        return None
    _check_new_names(path, parts.added, old_defs, parts.replaced)
    return _spliced(original, old_tree, old_defs, parts), parts.how()


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclasses.dataclass
class _Parts:
    """A block's definitions sorted out: replacements by name, new ones each after the
    file's definition it followed in the block (``""``: before the first replaced one)."""

    replaced: dict[str, str] = dataclasses.field(default_factory=dict)
    added: list[str] = dataclasses.field(default_factory=list)
    after: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    imports: list[str] = dataclasses.field(default_factory=list)
    _last: str = ""

    def replace(self, name: str, text: str) -> None:
        self.replaced[name] = text
        self._last = name

    def add(self, name: str, text: str) -> None:
        self.added.append(name)
        self.after.setdefault(self._last, []).append(text)

    def how(self) -> str:
        said = [f"defs: {', '.join(sorted(self.replaced))}"] if self.replaced else []
        said += [f"new: {', '.join(self.added)}"] if self.added else []
        return " + ".join(said)


def _spliced(
    original: str, old_tree: ast.Module, old_defs: Mapping[str, ast.stmt], parts: _Parts
) -> str:
    lines = original.splitlines(keepends=True)
    if not parts.replaced:  # only new definitions: at the end, above a __main__ demo
        at = next((statement_span(n)[0] for n in old_tree.body if _is_demo(n)), len(lines))
        added = "\n\n".join(parts.after[""])
        if at < len(lines):
            lines[at:at] = [added + "\n\n"]
        else:
            lines[-1] = lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"
            lines.append("\n\n" + added)
    first = next(iter(parts.replaced), "")
    for name in sorted(parts.replaced, key=lambda n: -old_defs[n].lineno):  # bottom up
        a, b = statement_span(old_defs[name])
        before = parts.after.get("", []) if name == first else []
        texts = [*before, parts.replaced[name], *parts.after.get(name, [])]
        lines[a:b] = ["\n\n".join(texts)]
    if parts.imports:
        at = _import_line(old_tree)
        follows = lines[at] if at < len(lines) else "\n"
        gap = [] if not follows.strip() or follows.startswith(("import ", "from ")) else ["\n\n"]
        lines[at:at] = [*parts.imports, *gap]
    return "".join(lines)


def _is_demo(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (example usage small models add): left out."""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _imports_itself(node: ast.Import | ast.ImportFrom, path: str) -> bool:
    module = PurePosixPath(path).with_suffix("").as_posix().replace("/", ".")
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""]
    else:
        names = [a.name for a in node.names]
    return any(n and (n == module or module.endswith("." + n)) for n in names)


def _check_new_names(
    path: str, added: Sequence[str], old_defs: Mapping[str, ast.stmt], replaced: Mapping[str, str]
) -> None:
    """A new name next to a name of the file's that the block leaves out is a rename (the
    tests still call the old one); a test belongs in a test file."""
    left = [n for n in old_defs if n not in replaced]
    for name in added:
        if name.startswith("test_") or name.startswith("Test"):
            raise EditError(
                f"the code block defines the test {name}: tests belong in a test file, "
                f"{path} needs the fix"
            )
        close = difflib.get_close_matches(name, left, n=1, cutoff=0.75)
        close = close or [n for n in left if len(n) > 3 and n in name]
        if close:
            raise EditError(
                f"the code block defines {name} where {path} has {close[0]}: keep the "
                "file's names (callers and tests use them)"
            )


def _import_line(tree: ast.Module) -> int:
    """Where a new import goes: after the last import, else after the module docstring."""
    spans = [statement_span(n)[1] for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    if spans:
        return max(spans)
    first = tree.body[0] if tree.body else None
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return statement_span(first)[1] if first is not None and is_doc else 0
