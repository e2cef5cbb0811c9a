"""The floor lane is static's own trajectory: whatever the other lanes do, every task
static solves is solved, and the floor's prompts are static's, byte for byte.

A scripted pool on real workspaces: "small" is cheap and fixes ``add`` only; "big" is
dear and fixes both functions, but only when asked from the start with its own history
(its first answer holds no edit; its retry, from a state that shows small's half fix,
goes wrong): exactly the real bug that search once lost, its retry led by a cheaper
sibling that had beaten the start.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import calc_project, config, worker
from standin import Seen, StandIn

from conductor_lsp import FixLoop, Session, load_config
from conductor_lsp.conductor.static import RETRY
from conductor_lsp.plan import Lane
from conductor_lsp.policy import Action, Example, Policy, fit

TWO = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TWO_TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
HALF = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
BOTH = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
BROKEN = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a - b\n"
#: Tasks by name: (calc.py, its tests). "one": big fixes it at once; "retry": big on
#: its own retry only; "small": only small fixes it (static never does).
TASKS = {
    "one": ("def add(a, b):\n    return a - b\n", "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5\n"),
    "retry": (TWO, TWO_TESTS),
    "small": ("def add(a, b):\n    return a - b + 0\n", "from calc import add\n\n\n"
              "def test_add():\n    assert add(2, 3) == 5\n"),
}  # fmt: skip
PLAN = json.dumps({"model_id": [0], "subtasks": ["Fix it."], "access_list": ["all"]})


def whole(text: str) -> str:
    return f"calc.py\n```python\n{text}```\n"


def respond(seen: Seen) -> str:
    model, prompt = seen.body.get("model"), seen.prompt().replace("\\n", "\n")
    if model == "planner":
        return PLAN  # a plan that sends the fix to small
    if "return a - b + 0" in prompt:  # the task only small fixes
        return whole("def add(a, b):\n    return a + b\n") if model == "small" else "no idea"
    if "def mul" not in prompt:  # "one": big fixes it at once
        return whole("def add(a, b):\n    return a + b\n") if model == "big" else "no idea"
    if model == "small":
        return "no idea" if RETRY in prompt else whole(HALF)
    if RETRY not in prompt:
        return "I am not sure where the bug is."  # big's first answer: no edit
    led = "return a + b\n\n\ndef mul" in prompt  # shown small's half fix
    return whole(BROKEN if led else BOTH)


STRATEGIES = {
    "static": 'backend = "static"',
    "search": 'backend = "search"',
    "policy": 'backend = "static"\npolicy = "p.json"',
    "conductor": "",  # a model conductor on the stand-in, written per workspace
}


def cheap_first_policy() -> Policy:
    """A policy that believes the cheap worker fixes one-function bugs (so it goes first)."""
    from helpers import FAIL, policy_pool

    from conductor_lsp import FileContext, Task

    examples = []
    for n in range(10):
        pool = policy_pool(f"c{n}", f"d{n}", 0.15 + n / 100)
        files = (FileContext(f"m{n}.py", "def f():\n    return 1\n"),)
        brief = Task(f"f{n}() is wrong", files, test_failures=FAIL.format(msg="x")).brief()
        examples.append(Example(brief, pool, Action(f"c{n}", "direct"), True, 0.0001))
        examples.append(Example(brief, pool, Action(f"d{n}", "direct"), True, 0.01))
    policy = Policy()
    fit(policy, examples)
    return policy


def workspace(root: Path, url: str, strategy: str, rounds: int) -> Path:
    calc, tests = TASKS[root.name]
    calc_project(root, calc=calc, tests=tests, repo=True)
    conductor = STRATEGIES[strategy] or (
        f'backend = "openai"\nmodel = "planner"\nbase_url = "{url}/v1"\nmax_retries = 0'
    )
    small = worker("small", url, price_in=0.15, price_out=0.6, strength=1)
    big = worker("big", url, price_in=3.0, price_out=15.0, strength=2)
    extra = f"[budget]\nmax_iterations = {rounds}\n"
    (root / "conductor.toml").write_text(config(conductor, small, big, extra=extra))
    if strategy == "policy":
        cheap_first_policy().save(root / "p.json")
    return root


def fix(root: Path) -> object:
    async def go() -> object:
        session = Session(load_config(root, env={}))
        try:
            return await FixLoop(session).run()
        finally:
            await session.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_every_task_static_solves_is_solved_by_every_strategy(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, rounds: int
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = respond
    solved: dict[str, set[str]] = {}
    for strategy in STRATEGIES:
        solved[strategy] = set()
        for task in TASKS:
            root = workspace(tmp_path / strategy / task, standin.url, strategy, rounds)
            if fix(root).end.passed:  # type: ignore[attr-defined]
                solved[strategy].add(task)
    assert solved["static"] == ({"one", "retry"} if rounds >= 2 else {"one"})
    for strategy, tasks in solved.items():
        assert solved["static"] <= tasks, (strategy, tasks)
    assert "small" in solved["search"]  # the other lanes add what static cannot


def test_the_floors_prompts_are_statics_byte_for_byte(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On "retry", small's half fix beats the start in round 1; the floor's retry still
    starts from its own answer and history, and asks big exactly what static asks."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = respond
    asked = {}
    for strategy in STRATEGIES:
        standin.seen.clear()
        report = fix(workspace(tmp_path / strategy / "retry", standin.url, strategy, 2))
        assert report.end.passed, strategy  # type: ignore[attr-defined]
        bigs = [s.body["messages"] for s in standin.seen if s.body.get("model") == "big"]
        asked[strategy] = bigs
        floor = [c for r in report.rounds for c in r.in_lane(Lane.FLOOR)]  # type: ignore[attr-defined]
        assert [c.worker for c in floor] == ["big", "big"], strategy
    for strategy in ("search", "policy", "conductor"):
        floor_calls = [m for m in asked[strategy] if RETRY in json.dumps(m) or m in asked["static"]]
        assert floor_calls[:2] == asked["static"], strategy


def test_the_bill_is_shown_beside_what_the_strongest_alone_would_cost(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In cost mode the cheap worker goes first and is green: the floor's call never runs,
    and the report prices it anyway (an estimate), beside what was spent."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = respond
    root = workspace(tmp_path / "search" / "small", standin.url, "search", 2)
    with (root / "conductor.toml").open("a") as f:
        f.write('[fix]\nprefer = "cost"\n')
    report = fix(root)
    assert report.end.passed  # type: ignore[attr-defined]
    assert [c.worker for c in report.candidates] == ["small"]  # type: ignore[attr-defined]
    assert report.strongest == "big" and report.floor_cost > 5 * report.cost > 0  # type: ignore[attr-defined]
    (outcome,) = [e.outcome for e in report.episodes]  # type: ignore[attr-defined]
    assert outcome is not None and outcome.floor_cost == pytest.approx(report.floor_cost)  # type: ignore[attr-defined]
    static = fix(workspace(tmp_path / "static" / "one", standin.url, "static", 2))
    assert static.cost > 0 and static.floor_cost == pytest.approx(static.cost)  # type: ignore[attr-defined]


def test_a_policy_that_never_saw_green_adds_no_lane(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fitted on verdicts that are all red, the policy finds no action worth a call: the
    job asks exactly what static asks and pays static's bill, round after round (before,
    it added its least hopeless pick as a lane on every task)."""
    from helpers import FAIL, policy_pool

    from conductor_lsp import FileContext, Task

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = respond
    examples = []
    for n in range(10):
        pool = policy_pool(f"c{n}", f"d{n}", 0.15 + n / 100)
        files = (FileContext(f"m{n}.py", "def f():\n    return 1\n"),)
        brief = Task(f"f{n}() is wrong", files, test_failures=FAIL.format(msg="x")).brief()
        for name, bill in ((f"c{n}", 0.0001), (f"d{n}", 0.01)):
            for wording in ("direct", "cause"):
                examples.append(Example(brief, pool, Action(name, wording), False, bill))
    hopeless = Policy()
    fit(hopeless, examples)
    asked, bills = {}, {}
    for strategy in ("static", "policy"):
        standin.seen.clear()
        root = workspace(tmp_path / strategy / "retry", standin.url, strategy, 2)
        if strategy == "policy":
            hopeless.save(root / "p.json")
        report = fix(root)
        assert report.end.passed, strategy  # type: ignore[attr-defined]
        asked[strategy] = [(s.body.get("model"), s.body["messages"]) for s in standin.seen]
        bills[strategy] = report.cost  # type: ignore[attr-defined]
    assert [m for m, _ in asked["policy"]] == ["big", "big"]
    assert asked["policy"] == asked["static"]
    assert bills["policy"] == pytest.approx(bills["static"])
