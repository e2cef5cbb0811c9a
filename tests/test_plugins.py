"""Plugins by entry point: a distribution of its own, installed with pip into a temporary
virtual environment, adds a provider and a conductor backend that a config then uses,
with no line of this repository changed."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import git
from helpers import WAIT

FIX = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
PLUGIN = f'''
"""A provider that always answers the same fix, and a backend that plans one step on the
first model worker: enough to see both plug in."""

from conductor_lsp.plan import Plan, Step
from conductor_lsp.protocols import WorkerResponse
from conductor_lsp.usage import Usage
from conductor_lsp.workers.registry import ProviderDefaults

FIX = {FIX!r}


class EchoWorker(ProviderDefaults):
    requires_model = False
    default_description = "answers with a fixed fix"

    def __init__(self, name, config, context=None):
        self.name, self.config = name, config

    @classmethod
    def doctor(cls, name, config, full):
        return "ok", "echo plugin"

    async def complete(self, request):
        return WorkerResponse(text=FIX, usage=Usage(10, 5), model="echo")

    async def aclose(self):
        return None


class FirstWorker:
    name = "first-worker"
    local = False
    asks_model = False
    uses_search = False

    def __init__(self, config):
        self.config = config

    @classmethod
    def doctor(cls, config):
        return "ok", "first-worker plugin"

    async def plan(self, task, workers, max_steps):
        first = next(w for w in workers if not w.is_tool)
        return Plan((Step(first.name, "Fix it."),), source=self.name)

    async def aclose(self):
        return None
'''
PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "conductor-lsp-echo"
version = "0.0.1"

[tool.setuptools]
py-modules = ["conductor_lsp_echo"]

[project.entry-points."conductor_lsp.providers"]
echo = "conductor_lsp_echo:EchoWorker"

[project.entry-points."conductor_lsp.backends"]
first-worker = "conductor_lsp_echo:FirstWorker"
"""


def test_a_plugin_distribution_adds_a_provider_and_a_backend(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "pyproject.toml").write_text(PYPROJECT)
    (plugin / "conductor_lsp_echo.py").write_text(PLUGIN)
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=WAIT
    )
    python = venv / "bin" / "python"
    inner = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The new environment sees this one's packages (conductor-lsp itself among them), as
    # an environment with conductor-lsp installed would; the plugin goes into its own.
    ours = [*site.getsitepackages(), sysconfig.get_path("purelib")]
    (Path(inner) / "parent.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in dict.fromkeys(ours)) + "\n"
    )
    installed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation",
         "--target", inner, str(plugin)],
        capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "conftest.py").write_text("")
    (root / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    git.Repo.init(root)
    (root / "conductor.toml").write_text(
        '[conductor]\nbackend = "first-worker"\n'
        "[fix]\nfloor = false\n"  # the plugin's own plan, not the floor's call first
        '[workers.e]\nprovider = "echo"\n'
        f'[test]\ncommand = "{python} -m pytest -q -p no:cacheprovider"\n'
    )
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run(
        [python, "-m", "conductor_lsp.cli", "fix", str(root)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Plan (first-worker)" in out.stdout and "outcome: green" in out.stdout
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    doctor = subprocess.run(
        [python, "-m", "conductor_lsp.cli", "doctor", str(root)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=env,
    )
    assert "echo plugin" in doctor.stdout and "first-worker plugin" in doctor.stdout
