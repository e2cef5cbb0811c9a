"""Real bugs this project did not write: the QuixBugs benchmark's 40 Python programs.

Each program (a classic algorithm from a programming challenge) has a one-line defect
and its own tests; the benchmark's repository also holds the corrected programs (MIT).
A task per program keeps the benchmark's layout (`python_programs/NAME.py`, its test
module, the JSON cases, `conftest.py`), says only "Fix the bug in NAME.", runs the
program's tests without the slow ones, and carries the corrected program as
`[solution] edit`, so every task is checked to fail as given and pass with the fix.

    git clone https://github.com/jkoppel/QuixBugs /tmp/QuixBugs
    python bench/quixbugs_tasks.py --repo /tmp/QuixBugs --out /tmp/quixbugs
    conductor-lsp eval /tmp/quixbugs --strategy static,search --config ...
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHECK_SECONDS = 60


def programs(repo: Path) -> list[str]:
    """The programs with a test module, in name order."""
    tests = sorted((repo / "python_testcases").glob("test_*.py"))
    return [p.stem.removeprefix("test_") for p in tests]


def build(repo: Path, name: str, fixed: str, out: Path) -> Path:
    """One task folder, as the benchmark lays it out (only what the program's tests need)."""
    task = out / f"quix_{name}"
    shutil.rmtree(task, ignore_errors=True)
    (task / "python_programs").mkdir(parents=True)
    (task / "python_testcases").mkdir()
    shutil.copy(repo / "conftest.py", task / "conftest.py")
    shutil.copy(repo / "python_programs" / f"{name}.py", task / "python_programs")
    test = (repo / "python_testcases" / f"test_{name}.py").read_text()
    # the test module may import the corrected program (``--correct``): not shipped
    test = re.sub(r"if pytest\.use_correct:\n(.*\n)*?else:\n((?:    .*\n)+)", _dedent, test)
    (task / "python_testcases" / f"test_{name}.py").write_text(test)
    for helper in ("load_testdata.py", "node.py"):
        if re.search(rf"^from {helper[:-3]} import", test, re.M):
            shutil.copy(repo / "python_testcases" / helper, task / "python_testcases")
    cases = repo / "json_testcases" / f"{name}.json"
    if cases.is_file():
        (task / "json_testcases").mkdir()
        shutil.copy(cases, task / "json_testcases")
    (task / "task.toml").write_text(
        f'instruction = "Fix the bug in {name}."\n'
        f'test = "python -m pytest -q python_testcases/test_{name}.py"\n'
        'kind = "bugfix"\n'
        f"# QuixBugs {name}: a one-line defect\n\n"
        f"[solution]\nedit = '''\npython_programs/{name}.py\n```python\n{fixed}```\n'''\n"
    )
    return task


def _dedent(m: re.Match[str]) -> str:
    return "".join(line[4:] + "\n" for line in m.group(2).splitlines())


def checks(task: Path, fixed: str) -> str:
    """'' when the task fails as given and passes with ``fixed``; else why not."""
    name = task.name.removeprefix("quix_")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / task.name
        shutil.copytree(task, work)
        if _passes(work, name):
            return "passes as given"
        (work / "python_programs" / f"{name}.py").write_text(fixed)
        return "" if _passes(work, name) else "fails with its fix"


def _passes(work: Path, name: str) -> bool:
    argv = [sys.executable, "-m", "pytest", "-q", "-x", f"python_testcases/test_{name}.py"]
    try:
        run = subprocess.run(argv, cwd=work, capture_output=True, timeout=CHECK_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return run.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repo", required=True, help="a clone of the QuixBugs repository")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    repo, out = Path(args.repo), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kept = 0
    for name in programs(repo):
        fixed = (repo / "correct_python_programs" / f"{name}.py").read_text()
        task = build(repo, name, fixed, out)
        why = checks(task, fixed)
        if why:
            shutil.rmtree(task)
            print(f"skipped {name}: {why}")
        else:
            kept += 1
    print(f"{kept} tasks in {out}")


if __name__ == "__main__":
    main()
