"""The package as it would be published: its wheel, built as ``.ci/run`` builds it,
installs into a fresh virtual environment with its declared dependencies, and its command
answers ``--version`` and ``doctor`` there, outside the clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import REPO, WAIT

from conductor_lsp.version import __version__

#: pip's words when the package index cannot be reached (no network here).
OFFLINE = ("NewConnectionError", "Could not fetch URL", "Temporary failure in name resolution")


#: Where the installed package lives, and the conductor's prompts it ships.
WHERE = (
    "import conductor_lsp, pathlib; p = pathlib.Path(conductor_lsp.__file__).parent; "
    "print(p); print(sorted(x.name for x in (p / 'conductor' / 'prompts').iterdir()))"
)


def wheel(tmp_path: Path) -> Path:
    """The wheel of the code as it is now, built as ``.ci/run`` builds ``dist/`` (a wheel
    left in ``dist/`` may be older than the code)."""
    staging = REPO / "build"  # setuptools' own, removed again unless it was there
    was_there = staging.exists()
    out = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
         str(tmp_path / "dist"), str(REPO)],
        capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    if not was_there:
        shutil.rmtree(staging, ignore_errors=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (found,) = (tmp_path / "dist").glob("*.whl")
    assert found.name == f"conductor_lsp-{__version__}-py3-none-any.whl"
    return found


def test_the_built_wheel_installs_in_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    whl = wheel(tmp_path)
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=True)
    py, exe = env_dir / "bin" / "python", env_dir / "bin" / "conductor-lsp"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(whl)],
        capture_output=True, text=True, timeout=WAIT, env=clean,
    )  # fmt: skip
    if install.returncode != 0 and any(w in install.stderr for w in OFFLINE):
        if os.environ.get("CI"):
            pytest.fail(f"the package index is unreachable: {install.stderr[-1000:]}")
        pytest.skip("no package index reachable to install the wheel's dependencies")
    assert install.returncode == 0, install.stderr[-3000:]
    outside = tmp_path / "somewhere"
    outside.mkdir()
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=WAIT, cwd=outside
    )
    assert version.stdout.strip() == f"conductor-lsp {__version__}", version.stderr
    doctor = subprocess.run(
        [str(exe), "doctor"], capture_output=True, text=True, timeout=WAIT, cwd=outside,
        env={**clean, "COLUMNS": "200", "NO_COLOR": "1"},
    )  # fmt: skip
    assert doctor.returncode == 0 and "Traceback" not in doctor.stderr, doctor.stderr
    assert "conductor-lsp doctor" in doctor.stdout and "backend static" in doctor.stdout
    # Its code is the wheel's, not the clone's; the prompts it ships came with it.
    where = subprocess.run(
        [str(py), "-c", WHERE], capture_output=True, text=True, timeout=WAIT, cwd=outside
    )
    assert str(env_dir) in where.stdout and ".md" in where.stdout, where.stdout + where.stderr
