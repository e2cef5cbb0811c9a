"""Run a command while other programs keep cores busy, as on a developer's laptop.

    python scripts/busy.py [--cores N] -- COMMAND...

Starts N processes (default 1) that spin on the CPU, runs COMMAND, stops them, and
exits with COMMAND's status. The suite must stay green under it and the in-process
models must keep their speed (bench/conductor_speed.py uses the same hog).
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def spin() -> None:
    """Busy forever: the arithmetic a build or a browser tab keeps a core on."""
    n = 0
    while True:
        n = (n * 1103515245 + 12345) % 2147483648


@contextmanager
def busy_cores(cores: int) -> Iterator[list[int]]:
    """``cores`` spinning processes while the block runs (their pids)."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=spin, daemon=True) for _ in range(cores)]
    for p in procs:
        p.start()
    try:
        yield [p.pid or 0 for p in procs]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(10)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=1, help="cores kept busy (default: 1)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command: busy.py [--cores N] -- COMMAND...")
    with busy_cores(args.cores) as pids:
        print(f"busy: {len(pids)} core(s) spinning (pids {pids})", file=sys.stderr, flush=True)
        return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
