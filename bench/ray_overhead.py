"""``eval --ray`` against a local Ray head on this machine: the same rows as a local run,
and what Ray adds per task. The pool is the loopback stand-in answering each task's known
fix, so the seconds are the loop's and the tests', not a model's.

    python bench/ray_overhead.py [--tasks 8] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, table

sys.path.insert(0, str(REPO / "tests"))
from standin import Seen, StandIn

SAME = ("task", "strategy", "solved", "outcome", "rounds", "worker_calls", "tokens", "cost")


def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="ray-overhead-"))
    names = sorted(p.name for p in (REPO / "bench/tasks").iterdir() if (p / "task.toml").is_file())
    fixes = {}
    for name in names[: args.tasks]:
        shutil.copytree(REPO / "bench/tasks" / name, work / "suite" / name)
        fixes[name] = (REPO / "bench/tasks" / name / "task.toml").read_text().split("'''")[1]

    def answer(seen: Seen) -> str:
        prompt = seen.prompt().replace("\\n", "\n")
        for fix in fixes.values():
            if fix.strip().splitlines()[0] in prompt and fix.split("SEARCH\n")[1][:20] in prompt:
                return fix
        return "no idea"

    standin = StandIn(responder=answer).start()
    cfg = work / "pool.toml"
    cfg.write_text(
        f'[conductor]\nbackend = "static"\n[workers.coder]\nprovider = "openai-compatible"\n'
        f'model = "coder"\nbase_url = "{standin.url}/v1"\nmax_retries = 0\n'
    )
    rows, seconds, table_rows = {}, {}, []
    for mode, extra in (("local", []), ("ray", ["--ray", "local"])):
        out = work / f"{mode}.jsonl"
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "conductor_lsp.cli", "eval", str(work / "suite"),
             "--strategy", "static", "--config", str(cfg), "--max-iterations", "1",
             "--jobs", str(args.jobs), "--out", str(out), *extra],
            cwd=work, check=True, capture_output=True,
        )  # fmt: skip
        seconds[mode] = time.monotonic() - started
        data = [json.loads(line) for line in out.read_text().splitlines()]
        rows[mode] = sorted(tuple(d[k] for k in SAME) for d in data)
        per_row = sum(d["seconds"] for d in data) / len(data)
        solved = sum(d["solved"] for d in data)
        table_rows.append(
            [mode, f"{solved}/{len(data)}", f"{seconds[mode]:.1f} s", f"{per_row:.2f} s"]
        )
    standin.stop()
    print(table(["mode", "solved", "wall (start to end)", "per task (row)"], table_rows))
    same = "the same rows" if rows["ray"] == rows["local"] else "DIFFERENT rows"
    extra = (seconds["ray"] - seconds["local"]) / max(len(fixes), 1)
    print(
        f"{same}; Ray adds {seconds['ray'] - seconds['local']:.1f} s in all, {extra:.2f} s a task"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    main(ap.parse_args())
