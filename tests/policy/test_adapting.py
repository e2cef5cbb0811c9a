"""Online updates follow the pool as it changes: a cheap worker that starts failing is
abandoned within a few jobs, and a new cheap worker that solves is adopted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import BUGGY, WHOLE_FIX, WRONG, calc_project, config, worker
from standin import Seen, StandIn

from conductor_lsp import FileContext, FixLoop, Session, Task, load_config
from conductor_lsp.policy import Action, Example, Policy, rates
from conductor_lsp.policy.fit import FORGET, add_bills, add_rates, nudge
from conductor_lsp.protocols import WorkerInfo


def first_worker(root: Path) -> str:
    """One fix job, from the bug; the worker of its first candidate."""
    (root / "calc.py").write_text(BUGGY)

    async def go() -> object:
        session = Session(load_config(root, env={}))
        try:
            return await FixLoop(session).run()
        finally:
            await session.aclose()

    report = asyncio.run(go())
    assert report.end.passed  # type: ignore[attr-defined]
    return min(report.candidates, key=lambda c: c.order[1:]).worker  # type: ignore[attr-defined]


def pool_toml(root: Path, url: str, cheap: list[str]) -> None:
    """Cheap workers at a fifth of big's price: a worker is worth its call first while its
    chance beats its price relative to big's, so at a twentieth of the price a worker
    that turned bad is rightly tried until its chance is under 1/20 (many more jobs; a
    nudge that wrote it off faster also wrote off a cheap worker meeting a new suite,
    bench/shift.py)."""
    workers = [worker(n, url, price_in=0.6, price_out=3.0, strength=1) for n in cheap]
    workers.append(worker("big", url, price_in=3.0, price_out=15.0, strength=2))
    extra = "[learn]\nonline = true\n[budget]\nmax_iterations = 1\n"
    (root / "conductor.toml").write_text(
        config('backend = "static"\npolicy = "p.json"', *workers, extra=extra)
    )


@pytest.mark.parametrize(("trust", "within"), [(1.0, 5), (0.0, 10)], ids=["weights", "rates"])
def test_a_worker_that_turns_bad_is_dropped_and_a_new_good_one_adopted(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, trust: float, within: int
) -> None:
    """With the trust at 1 the weights decide (a fresh policy); at 0, as ``fit`` measured
    it on the real suites, only the base rates do. Those weigh three greens as evidence
    and forget slowly (``fit.FORGET``), so a worker that turned bad is dropped after more
    jobs (six here, seven before a run of reds cut its record, 17 when the rates were
    kept per kind and never faded; bench/README.md, "When the pool changes"), but
    dropped."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = {"old": 0}

    def respond(seen: Seen) -> str:
        model = seen.body.get("model")
        if model == "old":
            calls["old"] += 1
            return WHOLE_FIX if calls["old"] <= 3 else WRONG  # fails from its 4th call on
        return WHOLE_FIX  # big and new always fix it

    standin.responder = respond
    root = calc_project(tmp_path / "ws", repo=True)
    pool_toml(root, standin.url, ["old"])
    Policy(trust=trust).save(root / "p.json")  # it knows nothing yet
    firsts = [first_worker(root) for _ in range(3)]
    assert firsts == ["old"] * 3  # new to the pool, cheap, and right: tried first
    bad = []
    for _ in range(within + 3):
        bad.append(first_worker(root))
    assert bad[0] == "old" and "big" in bad[:within], bad  # abandoned
    assert bad[within - 1 :].count("old") <= 1, bad  # and stays so but for a rare second look
    pool_toml(root, standin.url, ["old", "new"])
    adopted = [first_worker(root) for _ in range(3)]
    # a new cheap worker is tried at once and in use at the end (its success lifts what it
    # shares with the old one, its rank, so the old one may be tried once more)
    assert adopted[0] == adopted[-1] == "new" and adopted.count("new") >= 2, adopted
    policy = Policy.load(root / "p.json")
    assert policy.about["online_updates"] == 3 + within + 3 + 3


def test_a_worker_with_a_long_record_that_turns_bad_is_dropped_within_dozens_of_jobs() -> None:
    """Fitted on 30 verdicts a wording (three in four green), a cheap worker at a fifth of
    big's price then fails every job. Counted as a fit counts, the base rates would put
    it first for 162 more jobs; online updates forget (27 jobs), and a run of reds its
    record makes unlikely cuts that record (``rates.watch``): dropped within 15. A worker
    as good as its record, red one job in four, keeps it."""

    pool = [
        WorkerInfo("old", "cheap", 0.6, 3.0, "openai", strength=1),
        WorkerInfo("big", "dear", 3.0, 15.0, "openai", strength=2),
    ]
    failing = "FAILED test_calc.py::test_add - assert 1 == 2"
    brief = Task("Fix calc.", (FileContext("calc.py", "x = 1\n"),), test_failures=failing).brief()
    record = [
        Example(brief, pool, Action("old", wording), k % 4 != 0, 0.0008)
        for k in range(30)
        for wording in ("direct", "cause")
    ] + [Example(brief, pool, Action("big", "direct"), True, 0.004)] * 30
    policy = Policy(trust=0.0)
    add_rates(policy, record)
    add_bills(policy, record)
    firsts = []
    for _ in range(40):
        picks = policy.choose(brief, pool, 3, prefer="balanced")
        first = min(picks, key=lambda r: -r[1] / r[2])[0]  # the first wave's pick
        firsts.append(first.worker)
        verdicts = [Example(brief, pool, Action("big", "direct"), True, 0.004)]
        if first.worker == "old":
            verdicts.append(Example(brief, pool, first, False, 0.0008))
        nudge(policy, verdicts)
    assert firsts[0] == "old" and "old" not in firsts[15:], firsts
    steady = Policy(trust=0.0)
    add_rates(steady, record)
    for k in range(40):  # the same record, then the same worker as it was
        add_rates(steady, [Example(brief, pool, record[0].action, k % 4 != 0)], FORGET)
        kept = [r.judged for key, r in steady.prior.items() if key.endswith("|worker:old")]
        assert min(kept) > 2 * rates.RESTART, (k, kept)  # faded (to 5 at least), never cut
