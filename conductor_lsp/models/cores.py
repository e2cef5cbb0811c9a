"""How many threads an in-process model decodes with: the cores free now, not the count.

A decoding step is hundreds of small parallel regions; each waits for its slowest
thread. With as many threads as cores and one core busy with another program (an
editor, a browser, a build, the job's own test run), one thread is always waiting for
a time slice, and decoding collapses (measured: 0.5 tokens/s against 30 on two cores,
``bench/conductor_speed.py``). So each decode asks how many cores are free: the cores
this process may use (its affinity and its cgroup's quota), less what other programs
kept busy since the last look (``/proc/stat``, this process's own time taken out).
Where the system says nothing (not Linux), every core is taken as free.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

#: Seconds a look at the machine spans at least (a shorter window is mostly noise).
WINDOW = 0.2
#: A core counts as busy when other programs kept it busy this much of the window.
BUSY = 0.5
#: Seconds between two looks at the cores free while a long answer decodes.
RETHREAD = 2.0


@dataclass
class ThreadOptions:
    """The key every in-process engine (transformers, local, llama-cpp) declares."""

    threads: int = 0
    """CPU threads; 0: the cores free when each answer starts (looked at again every few
    seconds while it decodes), so another busy program does not stall decoding."""

    def check_threads(self) -> None:
        if self.threads < 0:
            raise ConfigError("threads must be at least 0")


def usable_cores() -> int:
    """The cores this process may run on: its affinity, capped by a cgroup CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    quota = cgroup_quota()
    if quota is not None:
        cores = min(cores, max(1, math.floor(quota + 0.5)))
    return max(1, cores)


def cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs the cgroup (v2 ``cpu.max``, or v1 ``cfs_quota_us``) allows; None: no limit."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        q = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        p = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if q <= 0 or p <= 0 else q / p
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Snapshot:
    """CPU time so far: all the machine's busy and total ticks, and this process's own."""

    when: float
    busy: int
    total: int
    own: float

    @classmethod
    def take(cls, stat: Path = Path("/proc/stat")) -> Snapshot | None:
        try:
            head = stat.read_text().split("\n", 1)[0].split()
        except OSError:
            return None
        if not head or head[0] != "cpu":
            return None
        ticks = [int(x) for x in head[1:]]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
        times = os.times()
        own = times.user + times.system
        return cls(time.monotonic(), sum(ticks[:8]) - idle, sum(ticks[:8]), own)


def others_busy(before: Snapshot, after: Snapshot, cores: int) -> float:
    """Cores other programs kept busy between two snapshots (this process's time taken out)."""
    total = after.total - before.total
    if total <= 0:
        return 0.0
    machine_cores = os.cpu_count() or cores
    per_core = total / machine_cores  # ticks one core had in the window
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    own_ticks = (after.own - before.own) * hz
    busy = max(0.0, (after.busy - before.busy) - own_ticks)
    # Programs pinned elsewhere do not take our cores: count at most what is outside ours.
    outside = max(0, machine_cores - cores)
    return max(0.0, busy / per_core - outside)


class FreeCores:
    """The machine's free cores, read from the time since the last look (so a decode
    rarely waits for one; when the last look is too recent, it waits out ``WINDOW``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = Snapshot.take()

    def now(self) -> int:
        cores = usable_cores()
        with self._lock:
            before = self._last
            if before is None:
                return cores
            wait = before.when + WINDOW - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            after = Snapshot.take()
            if after is None:
                return cores
            self._last = after
        taken = math.floor(others_busy(before, after, cores) + (1 - BUSY))
        return max(1, cores - taken)


_FREE = FreeCores()


def decode_threads(configured: int = 0) -> int:
    """Threads for the next decode: ``configured`` when set (a ``threads`` key), else the
    cores free now."""
    return configured if configured > 0 else _FREE.now()


def use_torch_threads(device: str, configured: int) -> int:
    """torch's CPU threads for what comes next: ``configured``, else the cores free now
    (above); on a GPU the CPU only feeds it, and is left as it is."""
    if device != "cpu":
        return 0
    import torch

    n = decode_threads(configured)
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


__all__ = [
    "RETHREAD",
    "FreeCores",
    "ThreadOptions",
    "cgroup_quota",
    "decode_threads",
    "usable_cores",
    "use_torch_threads",
]
