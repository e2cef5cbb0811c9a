"""What many tests share: the calc workspace (one failing test), answers in the edit
formats, configurations that point workers at the loopback stand-in, and the command
line in a subprocess. The stand-in itself is ``standin.py``; the editors' drivers are
``lsp_editor.py`` and ``nvim_driver.lua``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import git
from standin import Seen

from conductor_lsp.conductor.static import DIRECT
from conductor_lsp.config.schema import WorkerConfig
from conductor_lsp.episodes.log import EpisodeLog
from conductor_lsp.episodes.records import Episode, Leaf, StepBill, VerdictRecord
from conductor_lsp.plan import Plan, Step
from conductor_lsp.policy import Example
from conductor_lsp.protocols import WorkerInfo

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
#: How long a test waits for one thing (a command, a reply, a job's end) before calling it
#: a hang. Generous on purpose: a busy machine is slow, and speed is measured in bench/,
#: never here. pytest-timeout bounds a whole test at three times this (pyproject.toml,
#: checked by tests/test_docs.py), so a test of a few waits fails on its own message.
WAIT = 600.0
#: The tests' workspaces run plain pytest, without the cache folder.
TEST_COMMAND = f"{PY} -m pytest -q -p no:cacheprovider"

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
#: The fix as a whole file, and as a SEARCH/REPLACE block.
WHOLE_FIX = f"calc.py\n```python\n{FIXED}```\n"
WRONG = "calc.py\n```python\ndef add(a, b):\n    return a * b\n```\n"
#: A plan of one step on worker 0, as a model conductor writes it.
PLAN = json.dumps({"model_id": [0], "subtasks": ["Fix add() now."], "access_list": ["all"]})


def sr(path: str, search: str, replace: str) -> str:
    """A SEARCH/REPLACE block for ``path``."""
    return f"{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


GOOD = sr("calc.py", "    return a - b\n", "    return a + b\n")


def calc_project(root: Path, *, calc: str = BUGGY, tests: str = TESTS, repo: bool = False) -> Path:
    """``calc.py`` (``add`` subtracts), its failing test and an empty ``conftest.py``; with
    ``repo``, committed in a fresh git repository."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(calc)
    (root / "conftest.py").write_text("")
    (root / "test_calc.py").write_text(tests)
    if repo:
        r = git.Repo.init(root)
        r.index.add(["calc.py", "conftest.py", "test_calc.py"])
        r.index.commit("init")
    return root


def worker(
    name: str,
    url: str,
    *,
    price_in: float = 1.0,
    price_out: float = 2.0,
    strength: int | None = None,
    description: str = "",
    retries: bool = False,
) -> str:
    """A ``[workers.NAME]`` table for an OpenAI-compatible worker on the stand-in, whose
    model is its name (so a responder can tell the workers apart)."""
    lines = [
        f"[workers.{name}]",
        'provider = "openai-compatible"',
        f'model = "{name}"',
        f'base_url = "{url}/v1"',
        f"price_in = {price_in}",
        f"price_out = {price_out}",
    ]
    if not retries:
        lines.append("max_retries = 0")
    if strength is not None:
        lines.append(f"strength = {strength}")
    if description:
        lines.append(f"description = {json.dumps(description)}")
    return "\n".join(lines) + "\n"


def config(conductor: str, *workers: str, tests: bool = True, extra: str = "") -> str:
    """A ``conductor.toml``: the ``[conductor]`` lines, the workers' tables, the test
    command (60 s) and anything ``extra``."""
    test = f'[test]\ncommand = "{TEST_COMMAND}"\ntimeout = 60\n' if tests else ""
    return f"[conductor]\n{conductor}\n" + "".join(workers) + test + extra


def openai_conductor(url: str) -> str:
    """``[conductor]`` lines for a model conductor on the stand-in (model "planner")."""
    return (
        f'backend = "openai"\nmodel = "planner"\nbase_url = "{url}/v1"\nmax_retries = 0\n'
        "price_in = 100.0\nprice_out = 200.0"
    )


#: The editors' calc: ``add`` subtracts, ``mul`` is right.
EDITOR_CALC = BUGGY + "\n\ndef mul(a, b):\n    return a * b\n"


def editor_workspace(root: Path, url: str) -> Path:
    """The editors' project (not a git repository): ``EDITOR_CALC``, its failing test, one
    worker "coder", plans of one step."""
    calc_project(root, calc=EDITOR_CALC)
    conductor = 'backend = "static"\nmax_steps = 1'
    (root / "conductor.toml").write_text(config(conductor, worker("coder", url)))
    return root


def coder_workspace(
    root: Path,
    url: str,
    conductor: str = 'backend = "static"',
    extra: str = "",
    *,
    repo: bool = True,
) -> Path:
    """The calc project with one worker, "coder" ($1 in, $2 out per million tokens)."""
    calc_project(root, repo=repo)
    (root / "conductor.toml").write_text(config(conductor, worker("coder", url), extra=extra))
    return root


def by_model(
    answers: Mapping[str, str | tuple[float, str]], default: str = "no idea"
) -> Callable[[Seen], str]:
    """Answer each model with its text (after its delay, when given as a pair; the
    stand-in serves in threads); a model not named answers ``default``."""

    def respond(seen: Seen) -> str:
        answer = answers.get(str(seen.body.get("model")), (0.0, default))
        delay, text = answer if isinstance(answer, tuple) else (0.0, answer)
        time.sleep(delay)
        return text

    return respond


def standin_workers(url: str) -> dict[str, dict[str, object]]:
    """One worker per provider, all pointed at the stand-in."""
    return {
        "gpt": {
            "provider": "openai",
            "model": "gpt-5-mini",
            "base_url": f"{url}/v1",
            "api_key_env": "TEST_OPENAI_KEY",
            "price_in": 1.0,
            "price_out": 2.0,
            "description": "stand-in OpenAI",
        },
        "claude": {
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "base_url": url,
            "api_key_env": "TEST_ANTHROPIC_KEY",
            "price_in": 3.0,
            "price_out": 15.0,
            "description": "stand-in Anthropic",
        },
        "gem": {
            "provider": "gemini",
            "model": "gemini-2.5-flash",
            "base_url": url,
            "api_key_env": "TEST_GEMINI_KEY",
            "price_in": 0.3,
            "price_out": 2.5,
            "description": "stand-in Gemini",
        },
    }


def worker_config(**kw: object) -> WorkerConfig:
    wc = WorkerConfig()
    for k, v in kw.items():
        setattr(wc, k, v)
    return wc


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the command line runs in: no colours, wide tables."""
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(extra or {})}


def cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = WAIT,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``conductor-lsp ARGS`` in a subprocess."""
    return subprocess.run(
        [PY, "-m", "conductor_lsp.cli", *args],
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        input=input,
    )


# --- the routing policy's tables ---------------------------------------------------------

#: A test report with one failure, its message to fill in.
FAIL = "$ pytest\nFAILED (exit 1)\n- test_x.py::test_x at test_x.py:3: {msg}\n"


def policy_pool(cheap: str, dear: str, price: float = 1.0) -> list[WorkerInfo]:
    """A pool of a cheap and a dear coder (ten times the price) and the tests tool."""
    return [
        WorkerInfo(dear, "a careful, expensive coder", price * 10, price * 10, "openai"),
        WorkerInfo(cheap, "a quick, cheap coder", price, price, "openai"),
        WorkerInfo("tests", "runs the tests", 0, 0, "tests", is_tool=True),
    ]


def write_episodes(path: Path, examples: Sequence[Example]) -> Path:
    """Each example as a recorded search episode of one leaf, with its outcome, written by
    the episode log as a fix job writes them."""
    log = EpisodeLog(path)
    for i, e in enumerate(examples):
        plan = Plan(steps=(Step(e.action.worker, DIRECT, (), "generation"),), source="search")
        bill = StepBill(e.action.worker, e.cost, 1.0)
        log.episode(
            Episode(
                id=f"e{i}",
                job=f"j{i}",
                round=1,
                task=e.brief,
                workers=tuple(e.workers),
                plan=plan,
                bills=(bill,),
                cost=e.cost,
                seconds=1.0,
            )
        )
        leaf = Leaf(0, e.action.worker, green=e.green, failing_after=0 if e.green else 1)
        after = () if e.green else ("t",)
        log.outcome(VerdictRecord(("t",), after, green=e.green, leaves=(leaf,), id=f"e{i}"))
    return path


def hostile_git_config(folder: Path) -> Path:
    """A user's git configuration that changes what git prints: an external diff program
    (it prints NOT A DIFF), colour always, no a/ b/ prefixes. Point GIT_CONFIG_GLOBAL at it."""
    external = folder / "external.sh"
    external.write_text("#!/bin/sh\necho 'NOT A DIFF'\n")
    external.chmod(0o755)
    config = folder / "gitconfig"
    config.write_text(
        f"[color]\n\tui = always\n[diff]\n\texternal = {external}\n\tnoprefix = true\n"
        "\tmnemonicPrefix = true\n"
    )
    return config
