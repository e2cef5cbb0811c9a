"""The README's first job, warm, idle and with one core busy (``conductor_speed.py
--first-job``): what a user waits for on a laptop where an editor, a browser or a build
keeps a core, on transformers and on llama.cpp in process, threads on the cores free
(the default) and on every core (as before), beside a bare ``import torch, transformers``."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, median, table

from conductor_lsp.models.cores import usable_cores
from conductor_lsp.models.llama import llama_available

sys.path.insert(0, str(REPO / "scripts"))
from busy import busy_cores

TASK = "Write a Python function that reverses a string"
CLI = [sys.executable, "-m", "conductor_lsp.cli"]


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    """(wall seconds, stdout) of one command in a fresh process."""
    started = time.perf_counter()
    out = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {out.stderr[-2000:]}")
    return time.perf_counter() - started, out.stdout


def workspace(root: Path, provider: str, path: str, threads: int) -> Path:
    """A folder whose configuration is the first job's, on one engine and thread count."""
    root.mkdir(parents=True)
    (root / "conductor.toml").write_text(
        f'[conductor]\nbackend = "static"\n\n[workers.local]\nprovider = "{provider}"\n'
        f'model = "{path}"\nthreads = {threads}\n'
    )
    return root


def runs(command: list[str], cwd: Path, repeat: int) -> tuple[float, float]:
    """(median wall s, median decode tokens/s; 0 where not printed) of ``repeat`` runs."""
    walls, rates = [], []
    for _ in range(repeat):
        wall, out = timed(command, cwd)
        walls.append(wall)
        rate = re.search(r"at ([\d.]+)\s+tokens/s", " ".join(out.split()))
        rates.append(float(rate.group(1)) if rate else 0.0)
    return median(walls), median(rates)


def first_job_table(path: str, cache: Path, repeat: int) -> str:
    cores = usable_cores()
    engines = [("transformers", "local")]
    if llama_available():
        engines.append(("llama.cpp", "llama-cpp"))
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="conductor-first-job-") as tmp:
        bare_cmd = [sys.executable, "-c", "import torch, transformers"]
        bare = runs(bare_cmd, Path(tmp), repeat)[0]
        with busy_cores(1):
            bare_busy = runs(bare_cmd, Path(tmp), repeat)[0]
        rows.append(["bare `import torch, transformers`", "-", bare, bare_busy,
                     f"{bare_busy / bare:.2f}x", "1.00x", "-", "-"])  # fmt: skip
        for name, provider in engines:
            for label, threads in (("the cores free", 0), (f"every core ({cores})", cores)):
                ws = workspace(Path(tmp) / f"{provider}-{threads}", provider, path, threads)
                command = [*CLI, "run", TASK]
                timed(command, ws)  # warm: the weights cache filled, files read once
                idle, idle_rate = runs(command, ws, repeat)
                with busy_cores(1):
                    busy, busy_rate = runs(command, ws, repeat)
                rows.append([name, label, idle, busy, f"{busy / idle:.2f}x",
                             f"{idle / bare:.2f}x", idle_rate, busy_rate])  # fmt: skip
    return table(
        ["first job (warm)", "threads", "idle s", "one core busy s", "busy / idle",
         "idle / bare import", "tokens/s idle", "tokens/s busy"],
        rows,
    )  # fmt: skip
