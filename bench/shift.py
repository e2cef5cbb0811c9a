"""When the tasks change: a policy fitted on ``bench/tasks`` meets the HumanEval-fix sample
and learns online, beside static, search and a policy fitted on HumanEval-fix itself.

The pool is scripted, as in ``bench/cost_pool.py``, with an ability table that differs
between the suites: "small" ($0.15 / $0.60) fixes one-file bugs of ``bench/tasks`` but,
on HumanEval-fix, only the typo-like bugs (a wrong operator or constant), not the
off-by-one or missing-case ones; "big" ($3 / $15) fixes everything. So what the first
policy learned is half wrong on the new suite. The first ``--tasks`` HumanEval tasks run
in order, one round each; the in-suite policy is fitted on the other tasks. It prints
solved, $ and $ per solved, and draws cumulative $ per solved task by task (``--png``).

    python bench/shift.py [--tasks 20] [--png bench/results/shift.png]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, table
from cost_pool import pool_toml
from humaneval_tasks import build
from standin import Seen, StandIn
from train_conductor import one_file_fix

from conductor_lsp import load_config
from conductor_lsp.eval import SuiteTask, evaluate, load_suite, parse_strategies
from conductor_lsp.eval.run import TaskResult
from conductor_lsp.policy import train_policy

TYPOS = ("operator", "constant")
_BUG = re.compile(r"# HumanEval .*, bug: ([\w -]+)")


def small_fixes(task: SuiteTask) -> bool:
    found = _BUG.search((task.path / "task.toml").read_text())
    return found.group(1) in TYPOS if found else one_file_fix(task)


def responder(tasks: list[SuiteTask]) -> Any:
    """Each task's known fix from the workers the ability table says know it."""
    by_entry = {t.instruction.removeprefix("Fix bugs in ").rstrip("."): t for t in tasks
                if t.instruction.startswith("Fix bugs in ")}  # fmt: skip
    others = [t for t in tasks if t not in by_entry.values()]

    def which(prompt: str) -> SuiteTask | None:
        head = prompt.split("## Task\n", 1)[-1].split("\n", 1)[0]
        if head.startswith("Fix bugs in "):
            return by_entry.get(head.removeprefix("Fix bugs in ").split(".")[0])
        for t in others:
            code = [f for f in t.files() if not f.startswith(("test_", "conftest"))]
            if all(f"## File `{f}`" in prompt for f in code):
                return t
        return None

    def respond(seen: Seen) -> str:
        task = which(seen.prompt().replace("\\n", "\n"))
        if task is None:
            return "I do not know this task."
        if seen.body.get("model") == "strong" or small_fixes(task):
            return task.solution
        return "I could not work out a change for this one."

    return respond


async def run(args: argparse.Namespace, url: str, out: Path) -> dict[str, list[TaskResult]]:
    (out / "pool.toml").write_text(pool_toml(url))
    base = load_config(out, out / "pool.toml")
    ours, humaneval = load_suite(REPO / "bench" / "tasks"), load_suite(out / "he")
    first, rest = humaneval[: args.tasks], humaneval[args.tasks :]
    singles = parse_strategies("single:small,single:big", base.workers)
    policies = {}
    for name, suite in (("tasks", ours), ("he", rest)):
        rows = out / f"fit-{name}.jsonl"
        await evaluate(suite, singles, base, out=rows, max_iterations=1, jobs=2)
        policies[name] = out / f"policy-{name}.json"
        train_policy([rows], [], policies[name], log=print)
    online = out / "policy-online.json"
    online.write_bytes(policies["tasks"].read_bytes())
    strategies: dict[str, Any] = dict(parse_strategies("static,search", base.workers))
    strategies["policy fitted on bench/tasks, online"] = {
        "conductor": {"backend": "static", "worker": "", "policy": str(online)},
        "learn": {"online": True},
    }
    strategies["policy fitted on HumanEval-fix"] = {
        "conductor": {"backend": "static", "worker": "", "policy": str(policies["he"])}
    }
    out_rows: dict[str, list[TaskResult]] = {}
    for name, layer in strategies.items():  # one at a time, in task order (online learns)
        rows_at = out / f"shift-{len(out_rows)}.jsonl"
        results = await evaluate(first, {name: layer}, base, out=rows_at, max_iterations=1)
        order = {t.name: i for i, t in enumerate(first)}
        out_rows[name] = sorted(results, key=lambda r: order[r.task])
    return out_rows


def curve(rows: list[TaskResult]) -> list[float]:
    """Cumulative $ per solved task after each task (0 before the first solved)."""
    out, paid, solved = [], 0.0, 0
    for r in rows:
        paid, solved = paid + r.cost, solved + r.solved
        out.append(paid / solved if solved else 0.0)
    return out


def draw(rows: dict[str, list[TaskResult]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, results in rows.items():
        ax.plot(range(1, len(results) + 1), curve(results), label=name, marker=".")
    ax.set_xlabel("HumanEval-fix tasks, in order")
    ax.set_ylabel("cumulative $ per solved task")
    ax.set_title("A policy from bench/tasks meets HumanEval-fix (scripted pool)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=20, help="HumanEval tasks run in order")
    ap.add_argument("--png", type=Path, default=None, help="where to draw the curves")
    ap.add_argument("--out", help="work folder (default: a temp dir)")
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="shift-"))
    out.mkdir(parents=True, exist_ok=True)
    build(out / "he", 64)
    stand = StandIn().start()
    stand.responder = responder([*load_suite(REPO / "bench" / "tasks"), *load_suite(out / "he")])
    try:
        rows = asyncio.run(run(args, stand.url, out))
    finally:
        stand.stop()
    cells = []
    for name, results in rows.items():
        solved, paid = sum(r.solved for r in results), sum(r.cost for r in results)
        cells.append([name, f"{solved}/{len(results)}", f"{paid:.4f}",
                      f"{paid / solved:.5f}" if solved else "-"])  # fmt: skip
    print(table(["strategy", "solved", "$", "$ per solved"], cells))
    if args.png:
        draw(rows, args.png)
        print(f"drew {args.png}")


if __name__ == "__main__":
    main()
