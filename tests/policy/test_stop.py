"""The stop rule: fitted from recorded rounds, it stops a hopeless task's other lane after
round 1 and says why; the floor goes on unless ``give_up_floor``; without a rule, nothing
stops early."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import calc_project, config, worker
from standin import StandIn

from conductor_lsp import FixLoop, Session, load_config
from conductor_lsp.episodes.records import Episode, Leaf, VerdictRecord
from conductor_lsp.errors import ConfigError
from conductor_lsp.plan import Lane, Plan, Step
from conductor_lsp.policy import Policy, StopRule, Turn
from conductor_lsp.policy.fit import Action, Example, fit
from conductor_lsp.policy.offline import recorded_turns, stop_rule
from conductor_lsp.policy.stop import FEATURES, fit_stop_rule

POOL_TOML = ("small", 0.15, 0.6, 1), ("big", 3.0, 15.0, 2)


def test_a_fitted_rule_gives_up_where_failed_rounds_were_not_followed_by_green() -> None:
    hopeless = [Turn(0.1, 2, False, False, green=False) for _ in range(20)]
    hopeful = [Turn(0.9, 2, True, False, green=True) for _ in range(20)]
    rule = fit_stop_rule([*hopeless, *hopeful, Turn(0.5, 2, False, False, True)])
    assert rule.turns == 41
    assert (
        rule.chance(Turn(0.1, 2, False, False)) < 0.2 < 0.8 < rule.chance(Turn(0.9, 2, True, False))
    )
    again = Policy.from_json(Policy(stop=rule).to_json()).stop
    assert again is not None and again.weights == rule.weights and again.turns == 41
    damaged = Policy(stop=rule).to_json()
    damaged["stop"]["features"] = ["bias"]
    with pytest.raises(ConfigError, match="stop rule over"):
        Policy.from_json(damaged)


def _episode(job: str, rnd: int, lane: Lane, worker_: str, green: bool) -> Episode:
    from helpers import policy_pool

    plan = Plan(steps=(Step(worker_, "Make the change the task asks for: write the code change."),))
    leaf = Leaf(0, worker_, green=green, failing_after=0 if green else 1)
    outcome = VerdictRecord(("t",), () if green else ("t",), green=green, leaves=(leaf,))
    return Episode(
        job=job, round=rnd, lane=lane, task="## Task\nfix it", plan=plan,
        workers=tuple(policy_pool("small", "big")), outcome=outcome,
    )  # fmt: skip


def test_recorded_turns_are_the_rounds_after_a_failed_one() -> None:
    episodes = [
        _episode("j1", 1, Lane.FLOOR, "big", False),
        _episode("j1", 1, Lane.PLAN, "small", False),
        _episode("j1", 2, Lane.FLOOR, "big", True),  # followed by a green: a turn, green
        _episode("j1", 2, Lane.PLAN, "small", False),
        _episode("j2", 1, Lane.FLOOR, "big", True),  # green at once: no turn
        _episode("j2", 2, Lane.PLAN, "small", False),
    ]
    turns = recorded_turns(episodes, Policy())
    assert sorted((t.floor, t.green) for t in turns) == [(False, False), (True, True)]
    assert all(t.round == 2 and t.chance is not None for t in turns)
    assert stop_rule(episodes, Policy()) is None  # too few to say when to give up


def cheap_policy(stop: StopRule | None) -> Policy:
    from helpers import FAIL, policy_pool

    from conductor_lsp import FileContext, Task

    examples = []
    for n in range(6):
        pool = policy_pool(f"c{n}", f"d{n}")
        files = (FileContext(f"m{n}.py", "def f():\n    return 1\n"),)
        brief = Task(f"f{n}() is wrong", files, test_failures=FAIL.format(msg="x")).brief()
        examples.append(Example(brief, pool, Action(f"c{n}", "direct"), True, 0.0001))
        examples.append(Example(brief, pool, Action(f"d{n}", "direct"), True, 0.01))
    policy = Policy(stop=stop)
    fit(policy, examples)
    return policy


#: A rule that finds every next round hopeless.
HOPELESS = StopRule([-10.0, *[0.0] * (len(FEATURES) - 1)], turns=99)


def fix(root: Path) -> object:
    async def go() -> object:
        session = Session(load_config(root, env={}))
        try:
            return await FixLoop(session).run()
        finally:
            await session.aclose()

    return asyncio.run(go())


def hopeless_task(root: Path, url: str, stop: StopRule | None, extra: str = "") -> Path:
    calc_project(root, repo=True)
    workers = [worker(n, url, price_in=i, price_out=o, strength=s) for n, i, o, s in POOL_TOML]
    budget = "[budget]\nmax_iterations = 3\n"
    conductor = 'backend = "search"\npolicy = "p.json"'
    (root / "conductor.toml").write_text(config(conductor, *workers, extra=budget + extra))
    cheap_policy(stop).save(root / "p.json")
    return root


@pytest.mark.parametrize("floor", [False, True])
def test_a_hopeless_tasks_other_lane_stops_after_round_one_and_says_why(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, floor: bool
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # every answer changes the code and breaks it another way: never stuck, never green
    counter = iter(range(1000))
    standin.responder = lambda seen: (  # type: ignore[assignment]
        f"calc.py\n```python\ndef add(a, b):\n    return a - b - {next(counter) + 1}\n```\n"
    )
    extra = "[fix]\ngive_up_floor = true\n" if floor else ""
    report = fix(hopeless_task(tmp_path / "ws", standin.url, HOPELESS, extra))
    lanes = [sorted({c.lane for c in r.candidates}) for r in report.rounds]  # type: ignore[attr-defined]
    assert lanes[0] == [Lane.PLAN, Lane.FLOOR] or lanes[0] == [Lane.FLOOR, Lane.PLAN]
    if floor:  # nothing more was paid for after round 1, and the job says why
        assert report.outcome == "stopped"  # type: ignore[attr-defined]
        assert "no candidate likely to help" in report.reason  # type: ignore[attr-defined]
        assert "spent" in report.reason  # type: ignore[attr-defined]
        assert all(not r.candidates for r in report.rounds[1:])  # type: ignore[attr-defined]
    else:  # the floor went on alone, static's own rounds, to the last
        assert lanes[1:] == [[Lane.FLOOR], [Lane.FLOOR]]
        assert report.outcome == "budget"  # type: ignore[attr-defined]


def test_without_a_rule_nothing_stops_early(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    counter = iter(range(1000))
    standin.responder = lambda seen: (  # type: ignore[assignment]
        f"calc.py\n```python\ndef add(a, b):\n    return a - b - {next(counter) + 1}\n```\n"
    )
    report = fix(hopeless_task(tmp_path / "ws", standin.url, None))
    assert len(report.rounds) == 3  # type: ignore[attr-defined]
    assert all(len({c.lane for c in r.candidates}) == 2 for r in report.rounds)  # type: ignore[attr-defined]
    assert report.outcome == "budget"  # type: ignore[attr-defined]
