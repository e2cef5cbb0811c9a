"""Threads for in-process models: the cores free now, not the count."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from busy import busy_cores

from conductor_lsp.models import cores
from conductor_lsp.models.cores import FreeCores, Snapshot, others_busy


def snap(busy: int, total: int, own: float = 0.0) -> Snapshot:
    return Snapshot(0.0, busy, total, own)


def test_other_programs_busy_cores_are_counted_and_our_own_time_is_not() -> None:
    n = os.cpu_count() or 1
    hz = os.sysconf("SC_CLK_TCK")
    window = 100 * n  # 100 ticks a core
    # One core's worth of busy ticks from others, none of ours.
    assert others_busy(snap(0, 0), snap(100, window), n) == pytest.approx(1.0)
    # The same ticks, all of them ours (one second at 100 ticks a second): nobody else.
    assert others_busy(snap(0, 0, 0.0), snap(100, window, 100 / hz), n) == pytest.approx(0.0)
    assert others_busy(snap(0, 0), snap(0, 0), n) == 0.0  # no time passed


def test_a_cgroup_quota_caps_the_cores(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cores.cgroup_quota(tmp_path) == pytest.approx(1.5)
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cores.cgroup_quota(tmp_path) is None
    assert cores.cgroup_quota(tmp_path / "absent") is None


def test_a_configured_count_wins() -> None:
    assert cores.decode_threads(3) == 3


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads /proc/stat (Linux)")
def test_a_core_kept_busy_by_another_program_is_left_to_it() -> None:
    usable = cores.usable_cores()
    free = FreeCores()
    with busy_cores(1) as (pid,):
        while cpu_ticks(pid) < 20:  # spinning for a while (however slowly it started)
            time.sleep(0.05)
        free.now()  # a look from here on
        seen = free.now()
    assert 1 <= seen <= max(1, usable - 1)


def cpu_ticks(pid: int) -> int:
    """User and system ticks a process has used (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])
