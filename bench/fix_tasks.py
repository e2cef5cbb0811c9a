"""Fix quality and cost: `conductor-lsp fix` over small repos with failing tests.

Per strategy (single worker, static pipeline, conductor): solved / total, calls,
tokens, $ and wall time. Workers come from the config file, so the same run works
with a local OpenAI-compatible server (llama.cpp, Ollama), paid APIs, or, with no
config, the embedded offline default (SmolLM2-135M: expect it to solve little).

    python bench/fix_tasks.py [--config conductor.toml] [--tasks N] [--max-iterations 2]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, table

from conductor_lsp import FixLoop, Session, load_config
from conductor_lsp.config.load import read_toml

TASKS = REPO / "bench" / "tasks"
STRATEGIES = {
    "single worker": {"conductor": {"backend": "static", "max_steps": 1}},
    "static pipeline": {"conductor": {"backend": "static", "max_steps": 3}},
    "conductor": {},
}


def prepare(task: Path, into: Path) -> Path:
    repo = into / task.name
    shutil.copytree(task, repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


async def solve(
    repo: Path, layers: dict[str, Any], strategy: dict[str, Any], iterations: int
) -> tuple[bool, int, int, float, float]:
    overrides = {**layers}
    for key, value in strategy.items():
        overrides[key] = {**overrides.get(key, {}), **value}
    overrides["test"] = {
        "command": f"{sys.executable} -m pytest -q -p no:cacheprovider",
        "timeout": 60,
    }
    overrides.setdefault("budget", {})["max_iterations"] = iterations
    cfg = load_config(repo, overrides=overrides)
    session = Session(cfg)
    t0 = time.perf_counter()
    try:
        loop = FixLoop(
            session,
            instruction=(repo / "task.txt").read_text().strip() + " Make the failing tests pass.",
        )
        report = await loop.run()
    finally:
        await session.aclose()
    calls = sum(t.calls for t in report.tallies.values())
    tokens = sum(t.usage.input_tokens + t.usage.output_tokens for t in report.tallies.values())
    cost = sum(t.cost for t in report.tallies.values())
    return report.end.passed, calls, tokens, cost, time.perf_counter() - t0


async def main_async(args: argparse.Namespace) -> None:
    layers: dict[str, Any] = read_toml(Path(args.config)) if args.config else {}
    tasks = sorted(p for p in TASKS.iterdir() if p.is_dir())[: args.tasks]
    rows = []
    for name, strategy in STRATEGIES.items():
        solved = calls = tokens = 0
        cost = seconds = 0.0
        for task in tasks:
            with tempfile.TemporaryDirectory() as tmp:
                repo = prepare(task, Path(tmp))
                ok, c, t, d, s = await solve(repo, layers, strategy, args.max_iterations)
            solved += ok
            calls, tokens, cost, seconds = calls + c, tokens + t, cost + d, seconds + s
            print(
                f"  {name:16} {task.name:12} {'solved' if ok else 'not solved'} "
                f"({c} calls, {s:.1f}s)",
                flush=True,
            )
        rows.append(
            [name, f"{solved}/{len(tasks)}", calls, tokens, f"{cost:.4f}", f"{seconds:.0f} s"]
        )
    print()
    print(table(["strategy", "solved", "calls", "tokens", "$", "wall time"], rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", help="a conductor.toml with [conductor] and [workers.*]")
    ap.add_argument("--tasks", type=int, default=12, help="run the first N tasks")
    ap.add_argument("--max-iterations", type=int, default=2)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
