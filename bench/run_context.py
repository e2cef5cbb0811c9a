"""Repository context in ``run --file`` jobs: tasks whose needed name lives two imports
away from the file the job is given (``bench/tasks_reach``), with the outline of what the
file reaches and without it, side by side on the same pool.

Each task folder's ``task.toml`` names the file (``file``); the job is the CLI's
``run --file FILE "INSTRUCTION"`` (the configured conductor, one job, no test shown to
the model); its answer is applied to a fresh copy of the task and the task's tests
judge it. Prints solved, tokens, $ and seconds per mode.

    python bench/run_context.py --config bench/configs/local_pair.toml
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from _common import REPO, table

from conductor_lsp import load_config
from conductor_lsp.edits.workspace import apply_output_to_disk
from conductor_lsp.jobs import Session, TaskRequest, build_task, run_task

MODES = {"with the map": 6000, "without": 0}


async def one(
    task_dir: Path, config_file: Path, chars: int, work: Path, backend: str
) -> dict[str, Any]:
    spec = tomllib.loads((task_dir / "task.toml").read_text())
    ws = work / f"{task_dir.name}-{chars}"
    shutil.copytree(task_dir, ws, ignore=shutil.ignore_patterns("task.toml", "__pycache__"))
    layer = {"fix": {"repo_map_chars": chars}, "conductor": {"backend": backend}}
    config = load_config(ws, config_file, layer)
    request = TaskRequest(spec["instruction"], files=(spec["file"],))
    job = build_task(config, request)  # what the run is shown, for the "mapped" column
    started = time.monotonic()
    async with Session(config) as session:
        result = await run_task(session, request)
    seconds = time.monotonic() - started
    written = apply_output_to_disk(ws, result.output, config.edits, targets=[spec["file"]])
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    )
    usage = [t.usage for t in result.tallies.values()]
    return {
        "task": task_dir.name,
        "green": tests.returncode == 0,
        "written": written.written,
        "tokens": sum(u.input_tokens + u.output_tokens for u in usage),
        "cost": result.cost,
        "seconds": seconds,
        "mapped": bool(job.repo_map),
    }


async def main(args: argparse.Namespace) -> None:
    tasks = sorted(p.parent for p in Path(args.suite).glob("*/task.toml"))
    work = Path(tempfile.mkdtemp(prefix="run-context-"))
    rows = []
    for name, chars in MODES.items():
        results = [await one(t, Path(args.config), chars, work, args.backend) for t in tasks]
        for r in results:
            print(name, r, flush=True)
        solved = [r["task"] for r in results if r["green"]]
        rows.append(
            [
                name,
                f"{len(solved)}/{len(results)}",
                sum(r["tokens"] for r in results),
                f"{sum(r['cost'] for r in results):.4f}",
                f"{sum(r['seconds'] for r in results):.0f} s",
                ", ".join(solved) or "-",
            ]
        )
    print(table(["mode", "solved", "tokens", "$", "time", "green"], rows))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--config", default=str(REPO / "bench/configs/local_pair.toml"))
    ap.add_argument("--suite", default=str(REPO / "bench/tasks_reach"))
    ap.add_argument("--backend", default="static", help="the conductor (default: static)")
    asyncio.run(main(ap.parse_args()))
