"""Plan shapes: a plan splits into chains read as shapes; a shape's later step sees the
earlier answer; a scripted pool where only a shape solves teaches the policy to choose
it; an answer that held no edit is repaired in the same round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import policy_pool as pool
from standin import Seen, StandIn
from test_policy import fix_job, with_calc_bug, workspace

from conductor_lsp.conductor.shapes import (
    ANALYSIS,
    DEBUGGING,
    DESCRIBE,
    EDIT_FROM,
    GENERATION,
    REPAIR,
    REVIEWED,
    Shape,
    ShapeName,
    chains,
    joined,
    pipeline_steps,
    read_shape,
    review_subtask,
)
from conductor_lsp.conductor.static import DIRECT, pipeline_plan
from conductor_lsp.edits import NO_EDIT
from conductor_lsp.episodes.log import read_episodes
from conductor_lsp.eval.strategies import parse_strategies
from conductor_lsp.plan import Plan, Step
from conductor_lsp.policy import Action, Example, Policy, examples_from, fit, round_plan

FIXED = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
WRONG = "calc.py\n```python\ndef add(a, b):\n    return a * b\n```\n"
#: What big says: the right change, in words, in no edit format.
PROSE = (
    "The bug is in calc.py: `add` subtracts. Its line `return a - b` must become `return a + b`."
)


def test_a_plan_splits_into_chains_that_read_as_shapes_and_join_back() -> None:
    plan = Plan(
        steps=(
            Step("small", "x", (), "generation"),
            Step("big", DESCRIBE, (), "analysis"),
            Step("small", EDIT_FROM, (1,), "generation"),
        )
    )
    parts = chains(plan)
    assert parts is not None
    assert [read_shape(c.steps) for c in parts] == [
        read_shape((Step("small", "x"),)),
        read_shape((Step("big", DESCRIBE, (), "analysis"), Step("small", EDIT_FROM, (0,)))),
    ]
    assert parts[1].shape().name is ShapeName.ARCHITECT and parts[1].shape().helper == "big"
    assert parts[1].steps[1].access == (0,)  # within the chain
    assert joined(parts) == plan.steps  # and back where they were
    piped = chains(pipeline_plan(pool("small", "big"), 5))
    assert piped is not None and len(piped) == 1  # one leaf: the review sees both
    analyst = piped[0].steps[0].worker
    assert piped[0].shape() == Shape(ShapeName.PIPELINE, "big", analyst)
    assert read_shape(pipeline_steps("small", "big")) == Shape(ShapeName.PIPELINE, "big", "small")
    other = (Step("small", "x", (), "analysis"), Step("big", "y", (0,)), Step("big", "z", (0, 1)))
    assert read_shape(other).name is ShapeName.CHAIN  # three steps, not the pipeline's
    shared = Plan(steps=(Step("a", "x", ()), Step("b", "y", (0,)), Step("c", "z", (0,))))
    assert chains(shared) is None  # two leaves see one step: it runs whole


def test_eval_names_every_shape_and_pair() -> None:
    workers = {"big": _Model(), "small": _Model()}
    names = list(parse_strategies("shapes:*", workers))
    assert names == ["single:big", "single:big@cause", "single:small", "single:small@cause",
                     "architect:big>big", "architect:big>small", "architect:small>big",
                     "architect:small>small", "review:big>big", "review:big>small",
                     "review:small>big", "review:small>small", "pipeline:big>big",
                     "pipeline:big>small", "pipeline:small>big",
                     "pipeline:small>small"]  # fmt: skip
    cause = parse_strategies("single:*@cause", workers)
    assert cause == {f"single:{n}@cause": {"conductor": {"backend": "static", "worker": n,
                                                         "wording": "cause"}}
                     for n in ("big", "small")}  # fmt: skip
    with pytest.raises(Exception, match="after @ can only be cause"):
        parse_strategies("single:big@why", workers)
    layer = parse_strategies("architect:big>small", workers)["architect:big>small"]
    assert layer["conductor"] == {"backend": "static", "worker": "small",
                                  "shape": "architect", "helper": "big"}  # fmt: skip
    with pytest.raises(Exception, match="HELPER>WORKER"):
        parse_strategies("architect:big", workers)


class _Model:
    provider = "openai-compatible"


def strategy_workspace(
    folder: Path, url: str, layer: dict[str, Any], *, rounds: int | None = 1
) -> Path:
    """The calc bug in a workspace whose [conductor] is an eval strategy's layer, with at
    most ``rounds`` rounds (None: the default)."""
    conductor = "\n".join(f'{k} = "{v}"' for k, v in layer["conductor"].items())
    root = workspace(folder, url, conductor)
    with_calc_bug(root)
    if rounds is not None:
        with (root / "conductor.toml").open("a") as f:
            f.write(f"[budget]\nmax_iterations = {rounds}\n")
    return root


def _pool_answers(seen: Seen) -> str:
    """big describes well but writes no edit; small edits well only what it is told."""
    text = seen.prompt()
    if seen.body.get("model") == "big":
        return PROSE
    return FIXED if "return a + b" in text else WRONG


def test_a_shape_wins_what_no_single_call_wins_and_the_policy_learns_to_choose_it(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = _pool_answers
    strategies = parse_strategies("single:*,architect:*", {"big": _Model(), "small": _Model()})
    won, episodes = {}, []
    for name, layer in strategies.items():
        folder = tmp_path / name.replace(":", "-").replace(">", "-")
        root = strategy_workspace(folder, standin.url, layer)
        standin.seen.clear()
        report = fix_job(root)
        won[name] = report.end.passed  # type: ignore[attr-defined]
        if name == "architect:big>small":  # what the editor and the CLI show of it
            label = report.candidates[0].label  # type: ignore[attr-defined]
            assert "(architect: big describes, small edits)" in label, label
            edit = next(s for s in standin.seen if EDIT_FROM in s.prompt())
            assert "return a + b" in edit.prompt()  # the editor saw the description
            assert edit.body["model"] == "small"
        episodes += read_episodes(root / ".conductor" / "episodes.jsonl")
    assert won == {"single:big": False, "single:small": False, "architect:big>big": False,
                   "architect:big>small": True, "architect:small>big": False,
                   "architect:small>small": False}  # fmt: skip

    policy = Policy()
    examples = examples_from(episodes, policy)
    shaped = {(e.action.shape, e.action.helper, e.action.worker): e.green for e in examples}
    assert shaped[("architect", "big", "small")] is True
    assert shaped[("solo", "", "small")] is False and shaped[("solo", "", "big")] is False
    fit(policy, examples * 2)  # twice: a worker with fewer answers is still being tried
    assert policy.shapes() == ["architect"]
    brief = episodes[0].task
    plan = round_plan(policy, brief, episodes[0].workers, 5, later=False)
    assert [(s.worker, s.subtask, s.access) for s in plan.steps] == [
        ("big", DESCRIBE, ()),
        ("small", EDIT_FROM, (0,)),
    ]
    best = policy.rank(brief, episodes[0].workers)[0][0]
    assert best == Action("small", "direct", "architect", "big")
    assert policy.cost(best, episodes[0].workers, 1000) == pytest.approx(
        policy.bills["architect:big>small"].cost / policy.bills["architect:big>small"].answers
    )


def _chain_answers(seen: Seen) -> str:
    """big's analysis names the change, but big writes the wrong code unless it reviews
    its own change seeing that analysis; small neither analyses nor writes well."""
    text = seen.prompt()
    mine = text[text.rindex("## Your subtask") :]
    if seen.body.get("model") != "big":
        return "The bug may be somewhere in calc.py." if ANALYSIS in mine else WRONG
    if ANALYSIS in mine or DESCRIBE in mine:
        return PROSE
    if DEBUGGING in mine and "return a + b" in text and "return a * b" in text:
        return FIXED  # the review saw the analysis and the change it reviews
    return WRONG


def test_a_three_step_chain_wins_what_nothing_shorter_wins_and_the_policy_learns_it(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = _chain_answers
    workers = {"big": _Model(), "small": _Model()}
    names = "single:*,architect:big>big,architect:big>small,review:big>big,pipeline:*"
    won, episodes = {}, []
    for name, layer in parse_strategies(names, workers).items():
        folder = tmp_path / name.replace(":", "-").replace(">", "-")
        root = strategy_workspace(folder, standin.url, layer)
        standin.seen.clear()
        report = fix_job(root)
        won[name] = report.end.passed  # type: ignore[attr-defined]
        if name == "pipeline:big>big":
            label = report.candidates[0].label  # type: ignore[attr-defined]
            assert "(pipeline: big analyses, big writes and reviews)" in label, label
            asked = [s.prompt() for s in standin.seen]
            mine = [a[a.rindex("## Your subtask") :] for a in asked]
            assert [(ANALYSIS in m, GENERATION in m, DEBUGGING in m) for m in mine] == [
                (True, False, False), (False, True, False), (False, False, True)]  # fmt: skip
            assert PROSE in asked[1]  # the change saw the analysis
            assert PROSE in asked[2] and "return a * b" in asked[2]  # the review saw both
        episodes += read_episodes(root / ".conductor" / "episodes.jsonl")
    assert [n for n, ok in won.items() if ok] == ["pipeline:big>big"]

    policy = Policy()
    examples = examples_from(episodes, policy)
    piped = {(e.action.helper, e.action.worker): e.green for e in examples
             if e.action.shape == "pipeline"}  # fmt: skip
    assert piped == {("big", "big"): True, ("big", "small"): False,
                     ("small", "big"): False, ("small", "small"): False}  # fmt: skip
    fit(policy, examples * 2)
    assert policy.shapes() == ["architect", "pipeline", "review"]
    brief, pool = episodes[0].task, episodes[0].workers
    best = policy.rank(brief, pool)[0][0]
    assert best == Action("big", "direct", "pipeline", "big")
    plan = round_plan(policy, brief, pool, 5, later=False)
    assert plan.steps == pipeline_steps("big", "big")
    bill = policy.bills["pipeline:big>big"]
    assert bill.answers and policy.cost(best, pool, 1000) == pytest.approx(bill.cost / bill.answers)
    assert policy.cost(Action("small", "direct", "pipeline", "small"), pool, 1000) > 0


def test_a_policy_fitted_before_shapes_chooses_as_it_did() -> None:
    policy = Policy()
    workers = pool("small", "big")
    fit(policy, [])
    assert policy.shapes() == []
    assert all(a.solo for a in policy.actions(workers))


def test_an_answer_with_no_edit_is_repaired_in_the_same_round(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """big's answer holds the change in words only; with [fix] repair the cheapest worker
    turns it into edits in the same round (one round, solved); without it, not solved."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = _pool_answers
    results = {}
    for repair in (False, True):
        root = workspace(tmp_path / f"r{repair}", standin.url, 'backend = "static"')
        with_calc_bug(root)
        with (root / "conductor.toml").open("a") as f:
            f.write(f"[budget]\nmax_iterations = 1\n[fix]\nrepair = {str(repair).lower()}\n")
        standin.seen.clear()
        report = fix_job(root)
        results[repair] = report
        if repair:
            asked = [s for s in standin.seen if REPAIR in s.prompt()]
            assert len(asked) == 1 and asked[0].body["model"] == "small"
            assert json.dumps(PROSE)[1:-1] in asked[0].prompt()  # it saw the answer
    assert not results[False].end.passed  # type: ignore[attr-defined]
    fixed = results[True]
    assert fixed.end.passed and len(fixed.rounds) == 1  # type: ignore[attr-defined]
    waves = [(c.worker, c.wave) for c in fixed.rounds[0].candidates]  # type: ignore[attr-defined]
    assert waves == [("big", 1), ("small", 2)]
    assert "repair: small" in fixed.rounds[0].candidates[1].label  # type: ignore[attr-defined]
    # The floor's bill is static's own call; the repair is not counted as the floor.
    r = fixed.rounds[0]  # type: ignore[attr-defined]
    assert r.floor_cost() == pytest.approx(sum(a.run.cost for a in r.attempts if not a.follow_up))
    assert any(a.follow_up for a in r.attempts)
    # A repair teaches the policy nothing: it is no action it chooses.
    episodes = read_episodes(tmp_path / "rTrue" / ".conductor" / "episodes.jsonl")
    assert {e.action.worker for e in examples_from(episodes, Policy())} == {"big"}


def _reviewed_answers(seen: Seen) -> str:
    """big's answer is wrong; small is right only when it reviews big's red answer."""
    text = seen.prompt()
    if seen.body.get("model") == "big":
        return WRONG
    return FIXED if REVIEWED in text else WRONG


def test_a_review_runs_only_after_a_red_answer_and_sees_it_with_its_failures(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = _reviewed_answers
    layer = parse_strategies("review:big>small", {"big": _Model(), "small": _Model()})
    review_layer = layer["review:big>small"]
    root = strategy_workspace(tmp_path / "ws", standin.url, review_layer)
    report = fix_job(root)
    assert report.end.passed and len(report.rounds) == 1  # type: ignore[attr-defined]
    cands = report.rounds[0].candidates  # type: ignore[attr-defined]
    assert [(c.worker, c.wave, c.green) for c in cands] == [("big", 1, False), ("small", 2, True)]
    assert "review: small corrects big's red answer" in cands[1].label
    review = next(s for s in standin.seen if REVIEWED in s.prompt())
    assert review.body["model"] == "small"
    assert "a * b" in review.prompt() and "failing" in review.prompt()  # the answer, its verdict
    # The floor's bill is big's call alone; the review is learned as the review shape.
    r = report.rounds[0]  # type: ignore[attr-defined]
    assert r.floor_cost() == pytest.approx(next(a.run.cost for a in r.attempts if not a.follow_up))
    episodes = read_episodes(root / ".conductor" / "episodes.jsonl")
    learned = {(e.action, e.green) for e in examples_from(episodes, Policy())}
    assert learned == {(Action("big", "direct"), False),
                       (Action("small", "direct", "review", "big"), True)}  # fmt: skip

    # A green first answer is never reviewed.
    standin.responder = lambda s: FIXED
    standin.seen.clear()
    root2 = strategy_workspace(tmp_path / "ws2", standin.url, review_layer, rounds=None)
    again = fix_job(root2)
    assert again.end.passed and [c.worker for c in again.candidates] == ["big"]  # type: ignore[attr-defined]
    assert not any(REVIEWED in s.prompt() for s in standin.seen)


def test_a_review_of_an_answer_with_no_edit_says_so_not_that_tests_ran_on_it(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """big answers in words (no edit applies): small's review is told that, with why,
    and never that big's edits were applied and the tests still fail."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    standin.responder = lambda s: PROSE if s.body.get("model") == "big" else _fixed_if_told(s)
    layer = parse_strategies("review:big>small", {"big": _Model(), "small": _Model()})
    root = strategy_workspace(tmp_path / "ws", standin.url, layer["review:big>small"])
    report = fix_job(root)
    assert report.end.passed  # type: ignore[attr-defined]
    review = next(s for s in standin.seen if REVIEWED in s.prompt()).prompt()
    assert "held no edit that could be applied" in review and "`return a + b`" in review
    assert "Why no edit of it applied" in review
    assert "edits were applied" not in review and "tests after its edits" not in review


def test_a_review_names_why_no_edit_applied_in_the_one_wording_reports_use() -> None:
    """The reasons an answer's edits were refused reach the reviewer under the same
    label a verdict and the editor's report give them; tests that ran, as they said."""
    refused = review_subtask("big", "an answer", "SEARCH text not found", applied=False)
    assert f"Why no edit of it applied:\n<<<\n{NO_EDIT}: SEARCH text not found\n>>>" in refused
    ran = review_subtask("big", "an answer", "1 failing: test_add", applied=True)
    assert "The tests after its edits:\n<<<\n1 failing: test_add\n>>>" in ran
    assert NO_EDIT not in ran


def _fixed_if_told(seen: Seen) -> str:
    """small writes the fix only when told that the answer it reviews held no edit."""
    return FIXED if "held no edit that could be applied" in seen.prompt() else WRONG


def test_a_review_is_priced_and_given_its_chance_as_the_round_runs_it() -> None:
    policy = Policy(wordings={"direct": DIRECT}, explore=0.0, trust=0.0)
    workers = pool("small", "big")
    for _ in range(5):  # big alone: green half the time; small reviewing big: always
        fit_rows = [
            Example("t", workers, Action("big", "direct"), True, 0.01),
            Example("t", workers, Action("big", "direct"), False, 0.01),
            Example("t", workers, Action("small", "direct", "review", "big"), True, 0.001),
        ]
        fit(policy, fit_rows)
    review = Action("small", "direct", "review", "big")
    p_big = policy.hopeful("t", Action("big", "direct"), workers)
    p_rev = policy.hopeful("t", review, workers)
    chance, cost = policy.figures("t", review, workers, 1000)
    assert chance == pytest.approx(p_big + (1 - p_big) * p_rev)
    assert cost == pytest.approx(0.01 + (1 - p_big) * 0.001)
    assert "review" in policy.shapes()


def test_a_review_of_the_floors_own_call_rides_on_the_floor() -> None:
    from conductor_lsp.fix.follow import onto_floor
    from conductor_lsp.plan import Lane
    from conductor_lsp.policy import Option

    call = Step("big", DIRECT)
    floor = [Option(Lane.FLOOR, call, 0.01)]
    mine = [
        Option(Lane.PLAN, call, 0.012, 0.9, review="small"),
        Option(Lane.PLAN, Step("small", DIRECT), 0.001),
    ]
    floor_after, kept = onto_floor(floor, mine)
    assert [o.step.worker for o in kept if o.step] == ["small"]  # big is asked once
    assert floor_after[0].review == "small" and floor[0].review == ""  # a new list


def test_a_model_conductors_two_step_plan_teaches_the_architect_shape(tmp_path: Path) -> None:
    """A conductor's plan in the three lists (small analyses, big writes seeing it) is read
    as the architect shape: its leaf's verdict and the chain's whole bill are learned."""
    from conductor_lsp.episodes.log import EpisodeLog
    from conductor_lsp.episodes.records import Episode, Leaf, StepBill, VerdictRecord

    workers = pool("small", "big")
    plan = Plan(
        steps=(Step("small", "Find the cause.", (), "analysis"),
               Step("big", "Write the fix.", (0,), "generation")),
        source="openai",
    )  # fmt: skip
    log = EpisodeLog(tmp_path / "e.jsonl")
    bills = (StepBill("small", 0.001, 1.0), StepBill("big", 0.01, 2.0))
    log.episode(
        Episode(
            id="e0", job="j0", round=1, task="t", workers=tuple(workers), plan=plan, bills=bills
        )
    )
    leaf = Leaf(1, "big", green=True, failing_after=0)
    log.outcome(VerdictRecord(("t",), (), green=True, leaves=(leaf,), id="e0"))
    (example,) = examples_from(read_episodes(tmp_path / "e.jsonl"), Policy())
    assert example.action == Action("big", "direct", "architect", "small")
    assert example.green and example.cost == pytest.approx(0.011)


def test_a_pair_never_tried_starts_from_its_shapes_record_not_blind_exploration() -> None:
    """Only big>small was tried in the architect shape, and it failed every time: a pair
    never tried (small>small) is read from that record, with no bonus for being new
    (before, the weights alone put it at 0.99 and a replay chased it)."""
    workers = pool("small", "big")
    briefs = [f"task {i}" for i in range(8)]  # enough tasks for the trust to be measured
    rows = [Example(b, workers, Action("small", "direct", "architect", "big"), False, 0.01)
            for b in briefs] + [Example(b, workers, Action("big", "direct"), i % 2 == 0, 0.01)
                                for i, b in enumerate(briefs)]  # fmt: skip
    policy = Policy(wordings={"direct": DIRECT})
    fit(policy, rows)
    untried = Action("small", "direct", "architect", "small")
    assert policy.bills.get(untried.bill_key) is None
    assert policy.hopeful("task 9", untried, workers) < 0.15
