"""Online updates are nudges bounded per verdict: one red answer on a task from a new
suite lowers the cheap worker's chance there without writing it off for the whole suite,
and a worker never billed is priced as the pool's real bills say."""

from __future__ import annotations

import itertools

import pytest
from helpers import FAIL
from helpers import policy_pool as pool
from test_policy import table_examples

from conductor_lsp import FileContext, Task
from conductor_lsp.policy import Action, Example, Policy, fit
from conductor_lsp.policy.fit import nudge
from conductor_lsp.policy.rates import Bill
from conductor_lsp.protocols import WorkerInfo

WORKERS = pool("c0", "d0", 0.5)
CHEAP, DEAR = Action("c0", "direct"), Action("d0", "direct")


def new_suite(n: int) -> str:
    """A task of a suite the policy never saw: words of its own, one file, one assertion."""
    source = f"def entry_{n}(numbers, threshold):\n    return sorted(numbers)[{n}]\n"
    files = (FileContext(f"entry_{n}.py", source),)
    failure = FAIL.format(msg=f"assert candidate([{n}, 2.0, 3.9], 0.3) == True")
    task = Task(f"Fix bugs in entry_{n}: HumanEval candidate.", files, test_failures=failure)
    return task.brief()


def red_on(brief: str) -> list[Example]:
    """A job where the cheap worker's answer stayed red and the dear one's turned green."""
    return [Example(brief, WORKERS, CHEAP, False, 0.001), Example(brief, WORKERS, DEAR, True, 0.01)]


def fitted() -> Policy:
    policy = Policy()
    fit(policy, table_examples())
    return policy


def test_one_red_verdict_lowers_the_cheap_workers_chance_without_writing_it_off() -> None:
    policy = fitted()
    before = policy.p_green(new_suite(2), CHEAP, WORKERS)
    nudge(policy, red_on(new_suite(1)))
    after = policy.p_green(new_suite(2), CHEAP, WORKERS)
    assert after < before
    # Still worth its call first: above its price relative to the dear worker's (1/10).
    assert after > 0.2, after
    # The full AdaGrad step a first fit takes on every new word wrote it off at once.
    refit = fitted()
    fit(refit, red_on(new_suite(1)), epochs=5)
    assert refit.p_green(new_suite(2), CHEAP, WORKERS) < 0.05


def test_red_verdicts_one_after_another_bring_the_chance_down_step_by_step() -> None:
    policy = fitted()
    chances = []
    for n in range(1, 7):
        nudge(policy, red_on(new_suite(n)))
        chances.append(policy.p_green(new_suite(99), CHEAP, WORKERS))
    assert all(b < a for a, b in itertools.pairwise(chances)), chances
    assert chances[-1] < chances[0] / 2, chances
    # and a green one lifts it again
    nudge(policy, [Example(new_suite(7), WORKERS, CHEAP, True, 0.001)])
    assert policy.p_green(new_suite(99), CHEAP, WORKERS) > chances[-1]


def test_a_worker_never_billed_is_priced_as_the_billed_workers_bills_compare() -> None:
    big = WorkerInfo("big", "", 3.0, 15.0, "openai")
    new = WorkerInfo("new", "", 0.15, 0.6, "openai")
    policy = Policy(bills={"big": Bill(4.0, 0.004, 8.0)})  # $0.001 an answer, short answers
    cost = policy.cost(Action("new", "direct"), [big, new], 2000)
    nominal = (2000 * 0.15 + 600 * 0.6) / (2000 * 3.0 + 600 * 15.0)
    assert cost == pytest.approx(0.001 * nominal)
    # with no bill in the pool, from its prices alone
    alone = Policy().cost(Action("new", "direct"), [big, new], 2000)
    assert alone == pytest.approx((2000 * 0.15 + 600 * 0.6) / 1e6)
