"""The routing policy: fitted in seconds from verdicts and bills, saved as JSON, used by
every backend (static and search: it picks the leaves; a model conductor: it is shown its
figures), updated online, and absent until there is data."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FAIL, TEST_COMMAND, WAIT, calc_project, write_episodes
from helpers import policy_pool as pool
from standin import Seen, StandIn

from conductor_lsp import ConfigError, FileContext, Session, Task, WorkerInfo, load_config
from conductor_lsp.conductor.static import DIRECT
from conductor_lsp.plan import Lane, Step
from conductor_lsp.policy import (
    Action,
    Example,
    Option,
    Planner,
    Policy,
    fit,
    round_plan,
    waves,
)


def task(kind: str, n: int) -> Task:
    """A one-file bug fix, or a feature to implement across two files."""
    if kind == "bugfix":
        files = (FileContext(f"mod{n}.py", "def f():\n    return 1\n" * (n % 3 + 1)),)
        failure = FAIL.format(msg=f"AssertionError: assert {n} == {n + 1}")
        return Task(f"f{n}() returns the wrong value for case {n}.", files, test_failures=failure)
    files = (FileContext(f"api{n}.py", "x = 1\n" * 40), FileContext(f"db{n}.py", "y = 2\n" * 40))
    failure = FAIL.format(msg=f"ImportError: cannot import name export{n}")
    return Task(
        f"Implement the export feature number {n} across the modules.", files, test_failures=failure
    )


def table_examples() -> list[Example]:
    """The ability table: the cheap worker fixes one-file bugs only; the dear one all."""
    out = []
    for n in range(12):
        for kind in ("bugfix", "implement"):
            workers = pool(f"c{n}", f"d{n}", 0.5 + n / 10)
            brief = task(kind, n).brief()
            out.append(Example(brief, workers, Action(f"c{n}", "direct"), kind == "bugfix", 0.001))
            out.append(Example(brief, workers, Action(f"d{n}", "direct"), True, 0.01))
    return out


def test_fitting_on_an_outcome_table_routes_as_the_table_says() -> None:
    policy = Policy()
    fit(policy, table_examples())
    unseen = pool("ash", "oak", 2.0)  # names never seen: the policy reads price ranks
    bug, feature = task("bugfix", 99).brief(), task("implement", 99).brief()
    assert policy.p_green(bug, Action("ash", "direct"), unseen) > 0.8
    assert policy.p_green(feature, Action("ash", "direct"), unseen) < 0.3
    assert policy.p_green(feature, Action("oak", "direct"), unseen) > 0.8
    assert [s.worker for s in round_plan(policy, bug, unseen, 5, later=False).steps] == ["ash"]
    assert round_plan(policy, feature, unseen, 5, later=False).steps[0].worker == "oak"
    # A later round escalates: the strongest worker's retry runs whatever the first pick was.
    assert round_plan(policy, bug, unseen, 5, later=True).steps[0].worker == "oak"


def test_word_dropout_lets_the_tasks_shape_carry_a_verdict_its_own_words_would_hide() -> None:
    """Many one-file bugs the cheap worker fixes, and one two-file bug it does not, told in
    words no other task uses. Without dropout those words absorb the miss and a new
    two-file bug, in other words, looks like any bug; with it, the shape (two files to
    change) carries the verdict over."""

    def bug(n: int, words: str, files: int) -> str:
        ctx = tuple(FileContext(f"m{n}_{k}.py", "x = 1\n" * 8) for k in range(files))
        failure = FAIL.format(msg=f"AssertionError: assert {n} == {n + 1}")
        return Task(words, ctx, test_failures=failure).brief()

    examples = []
    for n in range(16):
        workers = pool(f"c{n}", f"d{n}")
        words = "conversion constant mistake wrong" if n == 0 else f"value {n} is wrong"
        brief = bug(n, words, 2 if n == 0 else 1)
        examples.append(Example(brief, workers, Action(f"c{n}", "direct"), n != 0, 0.001))
        examples.append(Example(brief, workers, Action(f"d{n}", "direct"), True, 0.01))
    unseen = pool("ash", "oak")
    two_files = bug(99, "totals are rounded and taxed wrong", 2)
    chance = {}
    for dropout in (0.0, 0.7):
        policy = Policy()
        fit(policy, examples, word_dropout=dropout)
        policy.trust = 1.0  # the weights alone, not shrunk toward the base rates
        chance[dropout] = policy.p_green(two_files, Action("ash", "direct"), unseen)
    assert chance[0.7] < chance[0.0] - 0.1, chance


def test_the_cheapest_set_that_reaches_the_target_is_chosen_not_grown_cheapest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cheap worker at P = 0.6 and a dear one at 0.95, target 0.8: the dear one alone
    reaches it, so the cheap one is left out (grown cheapest first, both would run);
    at 0.85 the cheap one alone is enough; under the target, the likeliest set (both:
    0.75 against 0.5)."""
    workers = pool("cheap", "dear")
    chance = {"cheap": 0.6, "dear": 0.95}
    policy = Policy(target=0.8, explore=0.0)  # the set, not exploration
    policy.wordings = {"direct": DIRECT}
    monkeypatch.setattr(policy, "p_green", lambda brief, a, pool: chance[a.worker])
    assert [a.worker for a, _, _ in policy.choose("t", workers, 3)] == ["dear"]
    chance["cheap"] = 0.85
    assert [a.worker for a, _, _ in policy.choose("t", workers, 3)] == ["cheap"]
    chance.update(cheap=0.5, dear=0.5)
    assert {a.worker for a, _, _ in policy.choose("t", workers, 3)} == {"cheap", "dear"}
    assert len(policy.choose("t", workers, 1)) == 1  # at most max_steps


def test_cost_mode_takes_the_default_set_and_runs_the_cheaper_calls_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cost mode chooses as the default does (the cheapest set that reaches the target,
    else the cheapest close to the likeliest) and differs in the order only: its least
    $ per chance of green took the cheap worker alone here (the trivial cascade, with
    the floor's call after it), so it never bought the second wording that wins what
    neither direct call wins."""
    workers = pool("cheap", "dear")
    chance = {("cheap", "direct"): 0.4, ("dear", "direct"): 0.4, ("cheap", "cause"): 0.3}
    price = {("cheap", "direct"): 1.0, ("dear", "direct"): 20.0, ("cheap", "cause"): 1.2}
    policy = Policy(target=0.8, explore=0.0)
    policy.wordings = {"direct": DIRECT, "cause": "Explain the cause, then fix it."}
    monkeypatch.setattr(policy, "p_green", lambda b, a, pool: chance.get((a.worker, a.wording), 0))
    monkeypatch.setattr(policy, "cost", lambda a, pool, t: price.get((a.worker, a.wording), 50))
    chosen = {
        prefer: {(a.worker, a.wording) for a, _, _ in policy.choose("t", workers, 3, prefer=prefer)}
        for prefer in ("balanced", "cost")
    }
    assert chosen["cost"] == chosen["balanced"] == set(chance)
    floor = Option(Lane.FLOOR, Step("dear", DIRECT), 20.0, 0.4)
    small = Option(Lane.PLAN, Step("cheap", DIRECT), 1.0, 0.4)
    cause = Option(Lane.PLAN, Step("cheap", policy.wordings["cause"]), 1.2, 0.3)
    assert waves([floor, small, cause], "balanced") == [[small], [floor], [cause]]
    assert waves([floor, small, cause], "cost") == [[small], [cause], [floor]]


def test_under_the_target_a_point_of_chance_is_not_bought_at_any_price(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Target 0.99, which no set reaches: two cheap workers at 0.5 each give 0.75; a dear
    one adds 0.015 more at forty times their $. The likeliest set took all three
    (6.6x the best model's $ at target 0.99 in the frontier replay); now the cheapest of
    the sets within ``CLOSE`` of it: the two cheap ones. A dear worker that adds more
    than that is still taken."""
    workers = [*pool("cheap", "dear"), WorkerInfo("mid", "another cheap coder", 1, 1, "openai")]
    chance = {"cheap": 0.5, "mid": 0.5, "dear": 0.06}
    price = {"cheap": 1.0, "mid": 1.0, "dear": 40.0}
    policy = Policy(target=0.99, explore=0.0)
    policy.wordings = {"direct": DIRECT}
    monkeypatch.setattr(policy, "p_green", lambda brief, a, pool: chance[a.worker])
    monkeypatch.setattr(policy, "cost", lambda a, pool, tokens: price[a.worker])
    chosen = {a.worker for a, _, _ in policy.choose("t", workers, 3, prefer="balanced")}
    assert chosen == {"cheap", "mid"}
    chance["dear"] = 0.3  # 0.825 against 0.75: worth its price under the target
    chosen = {a.worker for a, _, _ in policy.choose("t", workers, 3, prefer="balanced")}
    assert chosen == {"cheap", "mid", "dear"}


@pytest.mark.parametrize("prefer", ["balanced", "cost"])
def test_in_waves_a_cheap_worker_right_half_the_time_goes_first_and_a_hopeless_one_not(
    monkeypatch: pytest.MonkeyPatch, prefer: str
) -> None:
    """Run in waves, the dear call is paid only when the cheap one failed: at P = 0.6 and
    a tenth of the price, both (expected 1 + 0.4 x 10 = 5 against 10);
    all at once, the dear one alone; a cheap one at P = 0.06 is worth less per dollar
    than the dear one and is left out; under P = 0.05 nothing is picked at all."""
    workers = pool("cheap", "dear")
    chance = {"cheap": 0.6, "dear": 0.95}
    policy = Policy(target=0.8, explore=0.0)
    policy.wordings = {"direct": DIRECT}
    monkeypatch.setattr(policy, "p_green", lambda brief, a, pool: chance[a.worker])
    picks = [a.worker for a, _, _ in policy.choose("t", workers, 3, prefer=prefer)]
    assert sorted(picks) == ["cheap", "dear"]
    assert [a.worker for a, _, _ in policy.choose("t", workers, 3, prefer="latency")] == ["dear"]
    chance["cheap"] = 0.06
    assert [a.worker for a, _, _ in policy.choose("t", workers, 3, prefer=prefer)] == ["dear"]
    chance.update(cheap=0.01, dear=0.02)
    assert policy.choose("t", workers, 3, prefer=prefer) == []


def test_the_policy_file_round_trips_and_a_foreign_one_is_a_config_error(
    tmp_path: Path,
) -> None:
    policy = Policy()
    fit(policy, table_examples())
    policy.about = {"examples": 48, "trained_on": ["hand"]}
    policy.trust = 0.3  # the base rates are read back too
    path = tmp_path / "policy.json"
    policy.save(path)
    again = Policy.load(path)
    brief = task("bugfix", 5).brief()
    workers = pool("x", "y")
    for action in (Action("x", "direct"), Action("y", "cause")):
        assert again.p_green(brief, action, workers) == pytest.approx(
            policy.p_green(brief, action, workers), abs=1e-5
        )
    assert again.about == policy.about and again.wordings == policy.wordings
    assert again.prior == policy.prior and again.trust == 0.3
    assert json.loads(path.read_text())["format"] == "conductor-lsp-policy"  # JSON, no pickle
    bad = {
        "list.json": "[1, 2]",
        "other.json": '{"format": "something-else"}',
        "text.json": "not json at all",
        "newer.json": '{"format": "conductor-lsp-policy", "version": 9}',
        "broken.json": '{"format": "conductor-lsp-policy", "version": 1, "weights": 3}',
    }
    for name, text in bad.items():  # read once, where the session's planner reads it
        (tmp_path / name).write_text(text)
        (tmp_path / "conductor.toml").write_text(f'[conductor]\npolicy = "{name}"\n')
        with pytest.raises(ConfigError, match="policy"):
            Planner.of(load_config(tmp_path, env={}))


def test_an_online_update_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "policy.json"
    Policy(about={"examples": 1}).save(path)
    before = path.read_bytes()

    def crash(*args: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    policy = Policy()
    fit(policy, table_examples())
    with pytest.raises(OSError, match="power cut"):
        policy.save(path)
    assert path.read_bytes() == before  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["policy.json"]  # no temp file left


def workspace(root: Path, url: str, conductor: str) -> Path:
    root.mkdir()
    (root / "conductor.toml").write_text(
        f"[conductor]\n{conductor}\n"
        f'[workers.big]\nprovider = "openai-compatible"\nmodel = "big"\n'
        f'base_url = "{url}/v1"\nprice_in = 10.0\nprice_out = 10.0\n'
        f'description = "a careful, expensive coder"\n'
        f'[workers.small]\nprovider = "openai-compatible"\nmodel = "small"\n'
        f'base_url = "{url}/v1"\nprice_in = 1.0\nprice_out = 1.0\n'
        f'description = "a quick, cheap coder"\n'
    )
    return root


def plan_for(root: Path, t: Task) -> object:
    async def go() -> object:
        session = Session(load_config(root, env={}))
        try:
            return await session.plan(t)
        finally:
            await session.aclose()

    return asyncio.run(go())


def test_cold_start_is_exactly_static_and_a_policy_picks_the_leaves(
    tmp_path: Path, standin: StandIn
) -> None:
    root = workspace(tmp_path / "ws", standin.url, 'backend = "static"\npolicy = "p.json"')
    bug = task("bugfix", 7)
    cold = plan_for(root, bug)  # no policy file yet: the backend plans alone
    plain = workspace(tmp_path / "plain", standin.url, 'backend = "static"')
    assert cold == plan_for(plain, bug)
    assert [s.worker for s in cold.steps] == ["big"]  # type: ignore[attr-defined]
    policy = Policy()
    fit(policy, table_examples())
    policy.save(root / "p.json")
    warm = plan_for(root, bug)
    assert warm.source == "policy"  # type: ignore[attr-defined]
    assert [s.worker for s in warm.steps] == ["small"]  # type: ignore[attr-defined]
    assert plan_for(root, task("implement", 7)).steps[0].worker == "big"  # type: ignore[attr-defined]


def test_a_model_conductor_receives_the_policys_figures(tmp_path: Path, standin: StandIn) -> None:
    conductor = (
        f'backend = "openai"\nmodel = "planner"\nbase_url = "{standin.url}/v1"\n'
        'policy = "p.json"\npolicy_steer = true'
    )
    root = workspace(tmp_path / "ws", standin.url, conductor)
    policy = Policy()
    fit(policy, table_examples())
    policy.save(root / "p.json")
    plan = json.dumps({"model_id": [0], "subtasks": [DIRECT], "access_list": ["all"]})
    seen: list[Seen] = []

    def respond(s: Seen) -> str:
        seen.append(s)
        return plan

    standin.responder = respond
    result = plan_for(root, task("bugfix", 3))
    prompt = seen[0].prompt()
    assert "## What worked on similar tasks" in prompt
    assert "small: fixes similar tasks" in prompt and "big: fixes similar tasks" in prompt
    # policy_steer: the conductor chose big; the policy gives small the better chance here.
    assert [s.worker for s in result.steps] == ["small"]  # type: ignore[attr-defined]


def test_train_policy_from_episodes_and_doctor_shows_it(tmp_path: Path) -> None:
    episodes = write_episodes(tmp_path / "episodes.jsonl", table_examples())
    out = tmp_path / "ws" / "policy.json"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "300"}
    cli = [sys.executable, "-m", "conductor_lsp.cli"]
    trained = subprocess.run(
        [*cli, "train", "--policy", "--from-episodes", str(episodes), "--out", str(out)],
        capture_output=True, text=True, timeout=WAIT, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert trained.returncode == 0, trained.stdout + trained.stderr
    assert "policy fitted on 48 judged candidates" in trained.stdout
    about = Policy.load(out).about
    assert about["examples"] == 48 and about["held_out"]["pick_green"] >= 0.9
    (out.parent / "conductor.toml").write_text('[conductor]\npolicy = "policy.json"\n')
    doctor = subprocess.run(
        [*cli, "doctor", str(out.parent)], capture_output=True, text=True, timeout=WAIT, env=env
    )
    assert "48 judged candidates" in doctor.stdout and "pick_green" in doctor.stdout
    assert f"weights trusted {Policy.load(out).trust:g} against" in doctor.stdout
    summary = subprocess.run(
        [*cli, "episodes", str(out.parent), "--summary", "--file", str(episodes)],
        capture_output=True, text=True, timeout=WAIT, env=env,
    )  # fmt: skip
    assert "predicted against judged candidates" in summary.stdout, summary.stdout
    high = next(line for line in summary.stdout.splitlines() if "80-100%" in line)
    assert int(high.split("│")[2]) > 0  # confident predictions exist, and are counted


def with_calc_bug(root: Path) -> None:
    """A one-file bug (add subtracts), its failing test, and the command that runs it."""
    calc_project(root)
    with (root / "conductor.toml").open("a") as f:
        f.write(f'[test]\ncommand = "{TEST_COMMAND}"\n')


def fix_job(root: Path) -> object:
    """One fix job in ``root``, as the command line runs it; its report."""
    from conductor_lsp import FixLoop

    async def go() -> object:
        session = Session(load_config(root, env={}))
        try:
            return await FixLoop(session).run()
        finally:
            await session.aclose()

    return asyncio.run(go())


def test_online_learning_updates_the_policy_after_a_fix_job(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[learn] online: every judged candidate of the job is learned from, and saved."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "search"\npolicy = "p.json"')
    with_calc_bug(root)
    with (root / "conductor.toml").open("a") as f:
        f.write("[learn]\nonline = true\n")
    fixed = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    wrong = "calc.py\n```python\ndef add(a, b):\n    return a * b\n```\n"
    standin.responder = lambda s: fixed if s.body.get("model") == "big" else wrong

    report = fix_job(root)
    assert report.end.passed  # type: ignore[attr-defined]
    policy = Policy.load(root / "p.json")
    judged = sum(1 for c in report.candidates if c.verdict is not None)  # type: ignore[attr-defined]
    assert policy.about["online_updates"] == 1 and policy.about["examples"] == judged >= 1
    assert policy.bills["big"].answers >= 1  # what big's answers cost is known now


def test_a_cheap_first_pick_that_changes_nothing_escalates_in_the_same_round(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The policy sends a one-file bug to the cheap worker first (the likeliest per
    dollar), whose edit leaves the same failure: the floor's first call follows in the
    same round, and it fixes the bug, even with one round (escalation spends no round)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "static"\npolicy = "p.json"')
    with (root / "conductor.toml").open("a") as f:
        f.write("[budget]\nmax_iterations = 1\n")
    policy = Policy()
    fit(policy, table_examples())
    policy.save(root / "p.json")
    with_calc_bug(root)
    fixed = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    same = "calc.py\n```python\ndef add(a, b):\n    # checked\n    return a - b\n```\n"
    standin.responder = lambda s: fixed if s.body.get("model") == "big" else same

    report = fix_job(root)
    rounds = report.rounds  # type: ignore[attr-defined]
    waves = [(c.worker, c.wave) for c in rounds[0].candidates]
    assert waves == [("small", 1), ("big", 2)], waves  # the cheap pick first, then the floor
    assert len(rounds) == 1 and report.end.passed  # type: ignore[attr-defined]


def test_the_escalation_asks_the_strongest_what_static_asks_it_first(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the policy's cheap pick beat nothing, the floor's call that follows is static's
    own first call, word for word: not a retry of the cheap worker's failure, which lost
    tasks that static's first call solved with the real pair."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fixed = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    same = "calc.py\n```python\ndef add(a, b):\n    # checked\n    return a - b\n```\n"
    standin.responder = lambda s: fixed if s.body.get("model") == "big" else same
    firsts = {}
    for name, extra in (("static", ""), ("policy", '\npolicy = "p.json"')):
        standin.seen.clear()
        root = workspace(tmp_path / name, standin.url, f'backend = "static"{extra}')
        policy = Policy()
        fit(policy, table_examples())
        policy.save(root / "p.json")
        with_calc_bug(root)
        report = fix_job(root)
        assert report.end.passed  # type: ignore[attr-defined]
        asks = [s for s in standin.seen if s.body.get("model") == "big"]
        firsts[name] = asks[0].body["messages"]
    rounds = [[c.worker for c in r.candidates] for r in report.rounds]  # type: ignore[attr-defined]
    assert rounds == [["small", "big"]], rounds
    assert firsts["policy"] == firsts["static"]
    assert (
        DIRECT in json.dumps(firsts["policy"])
        and "previous" not in json.dumps(firsts["policy"]).lower()
    )


def test_a_policy_written_before_version_3_is_read_with_its_bills_and_rates(
    tmp_path: Path,
) -> None:
    """Versions 1 and 2 wrote bills and rates as positional lists; they read as the
    records they are, and the file is written back in the named form."""
    from conductor_lsp.policy.rates import Bill, Rate

    old = {
        "format": "conductor-lsp-policy",
        "version": 2,
        "target": 0.8,
        "wordings": {"direct": "Fix it."},
        "bills": {"big": [4, 0.02, 12.0]},
        "prior": {"price:cheapest|worker:big": [3.0, 4.0]},
        "weights": {},
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    policy = Policy.load(path)
    assert policy.bills == {"big": Bill(4.0, 0.02, 12.0)}
    assert policy.prior == {"price:cheapest|worker:big": Rate(3.0, 4.0)}
    policy.save(path)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["version"] == 3
    assert written["bills"] == {"big": {"answers": 4.0, "cost": 0.02, "seconds": 12.0}}
    assert written["prior"] == {"price:cheapest|worker:big": {"green": 3.0, "judged": 4.0}}
    assert Policy.load(path) == policy


def test_a_policy_file_written_before_the_converter_reads_and_writes_back_the_same() -> None:
    """written-by-version-3.json was saved by the hand-written writer this converter
    replaced: every field reads back, and writing it again gives the same JSON data."""
    path = Path(__file__).parent / "written-by-version-3.json"
    policy = Policy.load(path)
    assert policy.weights == {12: 0.5, 907: -1.25} and policy.trust == 0.4
    assert policy.bills["architect:big>small"].cost == 0.03
    assert policy.prior["architect|x"].judged == 2.0 and policy.reds == {"small": -1.5}
    assert policy.hidden is not None and policy.hidden.mean == [0.1, -0.2, 0.3]
    assert policy.stop is not None and policy.stop.turns == 17
    assert policy.to_json() == json.loads(path.read_text(encoding="utf-8"))
    for damage in ({"trust": "high"}, {"bills": {"big": {"answers": "x"}}}, {"weights": 3}):
        with pytest.raises(ConfigError, match="the policy p is damaged"):
            Policy.from_json({**policy.to_json(), **damage}, "p")
