"""A repository map: the workspace's Python outline, nearest first, for a fix job's analysis
steps and for every step of an editor or ``run`` job.

A bug whose cause is two modules away from the failing test is invisible in the files a
round shows (the test, its traceback's frames, what they import). The map is the rest of
the repository in outline: each file's classes and functions with their signatures, read
with ``ast``, ranked by how far the file is, through imports, from the traceback and the
tests, and by how many of the names the failing tests use it defines; cut to a budget.

Two depths keep the first map of a large repository fast: every file is *scanned* (a
regular expression finds its imports and the names it defines, enough to rank it), and only
the files the map shows, and the round's own files whose names rank the rest, are *parsed*
with ``ast``. Both are cached by (mtime, size): after the first map only changed files are
read again. Files on the deny list, and folders no one edits (``.git``, virtual
environments, ``node_modules``, caches), are never read.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import stat
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..edits.paths import deny_matcher, fold, fold_path
from ..task import Task

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", ".tox",
     ".mypy_cache", ".ruff_cache", ".pytest_cache", ".conductor", "build", "dist", ".eggs"}
)  # fmt: skip
MAX_FILE_BYTES = 400_000
# A render gives up on files that do not fit after this many in a row: each costs a parse.
MAX_MISSES = 40

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)|import[ \t]+([^\n#;]+))",
    re.M,
)
_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)


@dataclass
class Outline:
    """One file: its module name, what it defines (rendered lines), what it imports and
    the names it uses. A scanned outline (``parsed`` false) has only ``defines`` and
    ``imports``, read without ``ast``."""

    module: str
    mtime_ns: int
    size: int
    lines: list[str] = field(default_factory=list)
    defines: set[str] = field(default_factory=set)
    imports: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)
    parsed: bool = True


def module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = ast.unparse(node.args)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{prefix} {node.name}({args}){returns}"


def _names(clause: str) -> list[str]:
    """``a.b as c, d`` (or a parenthesised list over lines) -> ``["a.b", "d"]``."""
    names = (part.split(" as ")[0].strip() for part in clause.strip("()").split(","))
    return [n for n in names if n.replace(".", "").replace("_", "").isalnum()]


def scan(source: str, module: str, mtime_ns: int = 0, size: int = 0) -> Outline:
    """What ranking needs, without parsing: the imports (absolute ones, as ``outline``
    reads them) and every name a ``def`` or ``class`` line introduces."""
    out = Outline(module, mtime_ns, size, parsed=False)
    for found in _IMPORT.finditer(source):
        base, names, plain = found.groups()
        if plain is not None:
            out.imports.update(_names(plain))
        elif not base.startswith("."):
            out.imports.add(base)
            out.imports.update(f"{base}.{n}" for n in _names(names))
    out.defines.update(_DEFINES.findall(source))
    return out


def outline(source: str, module: str, mtime_ns: int = 0, size: int = 0) -> Outline:
    """The outline of one file's source (a file that does not parse: no lines)."""
    out = Outline(module, mtime_ns, size)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return out
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            out.lines.append(f"  class {node.name}{f'({bases})' if bases else ''}:")
            out.defines.add(node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.lines.append(f"    {_signature(item)}")
                    out.defines.add(item.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.lines.append(f"  {_signature(node)}")
            out.defines.add(node.name)
    for any_node in ast.walk(tree):
        if isinstance(any_node, ast.Import):
            out.imports.update(a.name for a in any_node.names)
        elif isinstance(any_node, ast.ImportFrom) and any_node.module and not any_node.level:
            out.imports.add(any_node.module)
            out.imports.update(f"{any_node.module}.{a.name}" for a in any_node.names)
        elif isinstance(any_node, ast.Name):
            out.uses.add(any_node.id)
        elif isinstance(any_node, ast.Attribute):
            out.uses.add(any_node.attr)
    return out


class RepoMap:
    """The outlines of a workspace's Python files, kept current by ``refresh``."""

    def __init__(self, root: Path, deny: Sequence[str] = ()) -> None:
        self.root = root.resolve()
        self.deny = list(deny)
        self.files: dict[str, Outline] = {}

    def _walk(self) -> Iterable[tuple[str, os.stat_result]]:
        """The Python files to map, denied folders pruned as the walk meets them (a file
        is denied by its folded path or any folded part, as ``denied_by`` says)."""
        denied = deny_matcher(self.deny).match
        root = str(self.root)
        for top, dirs, names in os.walk(root):
            rel_top = os.path.relpath(top, root).replace(os.sep, "/")
            prefix = "" if rel_top == "." else f"{fold_path(rel_top)}/"
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in SKIP_DIRS and not d.startswith(".") and not denied(fold(d))
            )
            for name in sorted(names):
                if not name.endswith(".py") or denied(fold(name)):
                    continue
                if denied(prefix + fold(name)):
                    continue
                try:
                    st = os.lstat(os.path.join(top, name))
                except OSError:
                    continue
                if st.st_size <= MAX_FILE_BYTES and not stat.S_ISLNK(st.st_mode):
                    rel = name if rel_top == "." else f"{rel_top}/{name}"
                    yield rel, st

    def refresh(self) -> int:
        """Re-read what changed since the last call; returns how many files were read."""
        seen: dict[str, Outline] = {}
        read = 0
        for rel, st in self._walk():
            old = self.files.get(rel)
            if old is not None and (old.mtime_ns, old.size) == (st.st_mtime_ns, st.st_size):
                seen[rel] = old
                continue
            try:
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            seen[rel] = scan(text, module_name(rel), st.st_mtime_ns, st.st_size)
            read += 1
        self.files = seen
        return read

    def detail(self, rel: str) -> Outline:
        """The parsed outline of a mapped file (parsed once per version of the file; one
        that changed or vanished since ``refresh`` keeps what the scan found)."""
        found = self.files.get(rel) or Outline(module_name(rel), 0, 0)
        if found.parsed:
            return found
        path = self.root / rel
        try:
            st = path.lstat()
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return found
        if (st.st_mtime_ns, st.st_size) != (found.mtime_ns, found.size):
            return found
        full = self.files[rel] = outline(text, found.module, found.mtime_ns, found.size)
        return full

    def distances(self, seeds: Iterable[str]) -> dict[str, int]:
        """Import hops from the seed files, both ways (who imports whom)."""
        return _hops(seeds, self._edges(both_ways=True))

    def reach(self, seeds: Iterable[str]) -> dict[str, int]:
        """Import hops from the seeds following imports only: what the seeds reach."""
        return _hops(seeds, self._edges(both_ways=False))

    def _edges(self, *, both_ways: bool) -> dict[str, set[str]]:
        """File -> the mapped files it imports (and, ``both_ways``, that import it)."""
        by_module = {o.module: rel for rel, o in self.files.items()}
        edges: dict[str, set[str]] = {rel: set() for rel in self.files}
        for rel, o in self.files.items():
            for name in o.imports:
                other = by_module.get(name)
                if other is not None and other != rel:
                    edges[rel].add(other)
                    if both_ways:
                        edges[other].add(rel)
        return edges

    def render(self, seeds: Sequence[str], max_chars: int = 6_000, about: str = "") -> str:
        """The outline within ``max_chars`` of the files other than the seeds (shown in
        full already): first what the seeds import, directly or through others, nearest
        first; then the files defining names the seeds use; then the rest by import hops
        either way, then path. ``about`` names the seeds in the outline's heading."""
        reached = self.reach(seeds)
        dist = self.distances(seeds)
        used = set().union(*(self.detail(s).uses for s in seeds if s in self.files))
        far = max(dist.values(), default=0) + 1

        def rank(rel: str) -> tuple[int, int, int, str]:
            o = self.files[rel]
            names = len(o.defines & used)
            if rel in reached:
                return (0, reached[rel], -names, rel)
            return (1 if names else 2, dist.get(rel, far), -names, rel)

        shown_whole = set(seeds)
        candidates = [rel for rel, o in self.files.items() if o.defines and rel not in shown_whole]
        out = self._fit(sorted(candidates, key=rank), max_chars)
        if not out:
            return ""
        about = about or "the files shown"
        head = (
            f"(an outline of {len(out)} of the repository's {len(candidates)} other Python "
            f"files, signatures only: first the modules {about} import, directly or through "
            f"others, then those that define names {about} use)"
        )
        return "\n".join([head, *out])

    def _fit(self, ranked: list[str], max_chars: int) -> list[str]:
        """Each file's outline in rank order while it fits; a file too big is skipped (a
        smaller one further down may still fit), but not forever."""
        out: list[str] = []
        size = misses = 0
        for rel in ranked:
            found = self.detail(rel)
            if not found.lines:
                continue
            head = f"{rel} (import {found.module})" if found.module else rel
            block = "\n".join([head, *found.lines])
            if size + len(block) + 1 > max_chars:
                misses += 1
                if misses >= MAX_MISSES:
                    break
                continue
            out.append(block)
            size += len(block) + 1
            misses = 0
        return out


def _hops(seeds: Iterable[str], edges: dict[str, set[str]]) -> dict[str, int]:
    """Breadth-first hops from the seeds (those in ``edges``) along ``edges``."""
    dist = {s: 0 for s in seeds if s in edges}
    queue = deque(dist)
    while queue:
        here = queue.popleft()
        for nxt in sorted(edges[here]):
            if nxt not in dist:
                dist[nxt] = dist[here] + 1
                queue.append(nxt)
    return dist


_LOCK = threading.Lock()
_MAPS: dict[tuple[str, tuple[str, ...]], RepoMap] = {}


def repo_map(root: Path, deny: Sequence[str]) -> RepoMap:
    """The workspace's map, current: one per (root, deny list) in this process, so a
    language server re-reads only what changed since its last job."""
    key = (str(root.resolve()), tuple(deny))
    with _LOCK:
        found = _MAPS.get(key)
        if found is None:
            found = _MAPS[key] = RepoMap(root, deny)
        found.refresh()
        return found


def with_outline(task: Task, root: Path, deny: Sequence[str], max_chars: int) -> Task:
    """An editor or ``run`` job's task with the outline of what its files reach, shown
    to every step (they have no test report to lead them there); unchanged when the map
    is off (``max_chars`` 0), the task has no file, or nothing is there to show."""
    seeds = [f.path for f in task.files]
    if max_chars <= 0 or not seeds:
        return task
    about = seeds[0] if len(seeds) == 1 else "the files shown"
    outline = repo_map(root, deny).render(seeds, max_chars, about=about)
    if not outline:
        return task
    return dataclasses.replace(task, repo_map=outline, map_every_step=True)
