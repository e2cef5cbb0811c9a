"""A suite of injected bugs in a real library, SWE-smith style: single-point mutations of
the library's own code (a comparison, an arithmetic or boolean operator, a small
constant, a returned truth value), each kept only where the library's own tests catch it.

Each task is the whole library at one commit with one line changed, its tests as they
are, and a ``task.toml``: a plain instruction (no hint of where), the library's test
command, the known fix as a SEARCH/REPLACE block, and ``[injected]`` (file, line, the
mutated and the original text) for ``bench/reach.py``.

    python bench/inject.py --source /work/.mirror/tkem+cachetools/repo \\
        --package src/cachetools --out bench/tasks_injected --count 10

``--source`` is a git directory (a ``fetch`` snapshot); its HEAD is used.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

INSTRUCTION = (
    "Some of this library's tests fail after a recent change. Find the bug in the "
    "library's code and fix it."
)
#: Makes ``src/`` importable for the library's own tests (a src layout, not installed).
CONFTEST = (
    "import pathlib\nimport sys\n\nsys.path.insert(0, str(pathlib.Path(__file__).parent / 'src'))\n"
)
TEST = "python -m pytest -q -p no:cacheprovider tests"
#: Not part of a task: what neither the library nor its tests need.
LEFT_OUT = (
    "__pycache__", "docs", ".github", "CHANGELOG*", "HISTORY*", "*.ini", ".readthedocs.yaml",
    "benchmark*", "bench", "results_*", "plot_*", "*.sh", "*.lock", "doc", "examples",
    "release-notes",
)  # fmt: skip
SWAPS = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: (" is ", " is not "),
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.And: (" and ", " or "),
    ast.Or: (" or ", " and "),
}  # fmt: skip


@dataclass(frozen=True)
class Mutation:
    file: str  # relative to the tree
    line: int  # 1-based
    original: str
    mutated: str
    operator: str
    where: str  # the enclosing function


def _swap(text: str, lo: int, hi: int, old: str, new: str) -> str | None:
    """The line with ``old`` between columns ``lo`` and ``hi`` replaced, if it is there once."""
    between = text[lo:hi]
    if between.count(old.strip()) != 1:
        return None
    at = lo + between.index(old.strip())
    return text[:at] + new.strip() + text[at + len(old.strip()) :]


def _candidates(path: Path, rel: str) -> list[Mutation]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    out: list[Mutation] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            found = _mutate(node, lines)
            if found is not None:
                line, new, what = found
                out.append(Mutation(rel, line, lines[line - 1], new, what, func.name))
    return list({(m.line, m.mutated): m for m in out}.values())


def _mutate(node: ast.AST, lines: list[str]) -> tuple[int, str, str] | None:
    if getattr(node, "lineno", None) != getattr(node, "end_lineno", -1):
        return None
    text = lines[node.lineno - 1]  # type: ignore[attr-defined]
    pairs: list[tuple[ast.AST, ast.AST, type]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        pairs = [(node.left, node.comparators[0], type(node.ops[0]))]
    elif isinstance(node, ast.BinOp):
        pairs = [(node.left, node.right, type(node.op))]
    elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
        pairs = [(node.values[0], node.values[1], type(node.op))]
    for left, right, op in pairs:
        if op in SWAPS and left.end_lineno == right.lineno == node.lineno:  # type: ignore[attr-defined]
            old, new = SWAPS[op]
            mutated = _swap(text, left.end_col_offset, right.col_offset, old, new)  # type: ignore[attr-defined]
            if mutated:
                return node.lineno, mutated, f"{old.strip()} -> {new.strip()}"  # type: ignore[attr-defined]
    value = getattr(node.value, "value", None) if isinstance(node, ast.Return) else None
    if isinstance(value, bool):
        flip = "False" if value else "True"
        new = text.replace(f"return {value}", f"return {flip}", 1)
        return node.lineno, new, f"return {value} -> {flip}"  # type: ignore[attr-defined]
    return None


def _caught(tree: Path, mutation: Mutation, test: str) -> int:
    """How many of the library's tests fail with ``mutation`` in (0: not caught)."""
    target = tree / mutation.file
    original = target.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    lines[mutation.line - 1] = mutation.mutated + "\n"
    target.write_text("".join(lines), encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, *test.split()[1:]],
            cwd=tree, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return 0  # a hang is not a bug a test catches cleanly
    finally:
        target.write_text(original, encoding="utf-8")
    if done.returncode != 1:
        return 0
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return int(tail.split(" failed")[0].split()[-1]) if " failed" in tail else 0


def _tree(source: Path, into: Path) -> None:
    archive = subprocess.run(
        ["git", f"--git-dir={source}", "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    if (into / "src").is_dir():
        (into / "conftest.py").write_text(CONFTEST, encoding="utf-8")


def _write_task(tree: Path, out: Path, name: str, m: Mutation, failing: int, test: str) -> None:
    folder = out / name
    shutil.copytree(tree, folder, ignore=shutil.ignore_patterns(*LEFT_OUT))
    target = folder / m.file
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[m.line - 1] = m.mutated + "\n"
    target.write_text("".join(lines), encoding="utf-8")
    quote = "'''"
    (folder / "task.toml").write_text(
        f'instruction = "{INSTRUCTION}"\ntest = "{test}"\nkind = "bugfix"\n\n'
        f"[solution]\nedit = {quote}\n{m.file}\n<<<<<<< SEARCH\n{m.mutated}\n=======\n"
        f"{m.original}\n>>>>>>> REPLACE\n{quote}\n\n"
        f"[injected]\nfile = {_toml(m.file)}\nline = {m.line}\nfunction = {_toml(m.where)}\n"
        f"operator = {_toml(m.operator)}\nfailing = {failing}\n"
        f"mutated = {_toml(m.mutated)}\noriginal = {_toml(m.original)}\n",
        encoding="utf-8",
    )
    written = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))["injected"]
    if (written["mutated"], written["original"]) != (m.mutated, m.original):
        raise SystemExit(f"{name}: task.toml does not read back the mutated line as written")


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's): Python's repr wrote a tab as
    ``'\\t'``, which TOML's literal strings keep as a backslash and a ``t``."""
    return json.dumps(text, ensure_ascii=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, required=True, help="a git directory")
    ap.add_argument("--package", default="src", help="the library's code, in the tree")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefix", default="inj")
    ap.add_argument("--test", default=TEST, help="the library's test command")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="inject-") as tmp:
        tree = Path(tmp) / "tree"
        _tree(args.source, tree)
        found: list[Mutation] = []
        for path in sorted((tree / args.package).rglob("*.py")):
            rel = path.relative_to(tree)
            if "tests" in rel.parts or rel.name.startswith("test_"):
                continue  # the library's own tests judge; they are not mutated
            found += _candidates(path, str(rel))
        random.Random(args.seed).shuffle(found)
        args.out.mkdir(parents=True, exist_ok=True)
        kept: dict[str, int] = {}
        tried = 0
        for m in found:
            if len(kept) >= args.count or kept.get(f"{m.file}:{m.where}", 0) >= 1:
                continue
            tried += 1
            failing = _caught(tree, m, args.test)
            if not failing:
                continue
            kept[f"{m.file}:{m.where}"] = 1
            name = f"{args.prefix}_{len(kept):02d}_{m.where.strip('_')}"
            _write_task(tree, args.out, name, m, failing, args.test)
            print(f"{name}: {m.file}:{m.line} {m.operator} ({failing} failing)")
        print(f"{len(kept)} kept of {tried} tried ({len(found)} candidate mutations)")


if __name__ == "__main__":
    main()
