"""How far a fitted policy trusts its weights against the base rates: measured by
``fit`` on tasks it leaves out, so words that tell the workers apart are kept and words
that only happened to go with a verdict are not."""

from __future__ import annotations

import dataclasses
import random

from helpers import FAIL
from helpers import policy_pool as pool
from test_policy import table_examples, task

from conductor_lsp import FileContext, Task
from conductor_lsp.policy import Action, Example, Policy, fit
from conductor_lsp.policy.fit import FORGET, nudge
from conductor_lsp.policy.rates import Rate

VOCAB = ["parser", "cache", "index", "window", "buffer", "token"]


def noisy_brief(n: int, rng: random.Random) -> str:
    """A one-file bug told in three words of a small vocabulary, drawn at random."""
    words = " ".join(rng.sample(VOCAB, 3))
    failure = FAIL.format(msg=f"AssertionError: assert {n} == {n + 1}")
    files = (FileContext(f"m{n}.py", "x = 1\n" * 8),)
    return Task(f"The {words} code is wrong in case {n}.", files, test_failures=failure).brief()


def test_words_that_say_nothing_leave_the_cheap_workers_chance_at_its_base_rate() -> None:
    rng = random.Random(1)
    examples = []
    for n in range(16):  # the cheap worker is green at random, whatever the words say
        brief, workers = noisy_brief(n, rng), pool(f"c{n}", f"d{n}")
        examples.append(Example(brief, workers, Action(f"c{n}", "direct"), rng.random() < 0.5))
        examples.append(Example(brief, workers, Action(f"d{n}", "direct"), True))
    policy = Policy()
    fit(policy, examples)
    green = sum(e.green for e in examples[::2])
    base = (green + 0.5) / (16 + 1)
    unseen = pool("ash", "oak")
    new = [noisy_brief(100 + k, rng) for k in range(10)]
    chances = [policy.p_green(b, Action("ash", "direct"), unseen) for b in new]
    assert policy.trust <= 0.2
    assert max(abs(c - base) for c in chances) < 0.05, (base, chances)
    policy.trust = 1.0  # the weights alone read the words as if they meant something
    alone = [policy.p_green(b, Action("ash", "direct"), unseen) for b in new]
    assert max(abs(c - base) for c in alone) > 0.1, (base, alone)


def test_a_workspaces_fixes_with_no_words_of_their_own_are_told_apart_by_their_files() -> None:
    """Every fix the user asks for without words has the standing instruction as its
    task: the trust folds tell those tasks apart by the files they change, so the trust
    is measured on them (errors that only happened to go with a verdict are not
    trusted) rather than left where it was."""
    from conductor_lsp.context import fix_instruction
    from conductor_lsp.policy.features import task_key

    rng = random.Random(3)
    errors = ["KeyError", "ValueError", "TypeError", "IndexError", "NameError", "OSError"]
    examples = []
    for n in range(16):  # the cheap worker is green at random, whatever the error says
        failure = FAIL.format(msg=f"{rng.choice(errors)}: case {n}")
        files = (FileContext(f"pkg/m{n}.py", "x = 1\n" * 8),)
        brief = Task(fix_instruction(""), files, test_failures=failure).brief()
        workers = pool(f"c{n}", f"d{n}")
        examples.append(Example(brief, workers, Action(f"c{n}", "direct"), rng.random() < 0.5))
        examples.append(Example(brief, workers, Action(f"d{n}", "direct"), True))
    assert len({task_key(e.brief) for e in examples}) == 16
    policy = Policy()
    assert policy.trust == 1.0  # what an unmeasured trust stays at
    fit(policy, examples)
    assert policy.trust <= 0.2


def test_words_that_tell_the_workers_apart_are_trusted() -> None:
    policy = Policy()
    fit(policy, table_examples())
    assert policy.trust >= 0.75
    assert policy.prior  # and the base rates are kept beside them, per kind of action


def test_an_online_update_counts_its_verdicts_into_the_base_rates() -> None:
    policy = Policy()
    fit(policy, table_examples())
    before = {k: dataclasses.replace(v) for k, v in policy.prior.items()}
    brief, workers = task("bugfix", 50).brief(), pool("c", "d")
    nudge(policy, [Example(brief, workers, Action("c", "direct"), False, 0.001)])
    changed = {k for k in policy.prior if policy.prior[k] != before.get(k)}
    assert len(changed) == 1
    (k,) = changed
    assert k.startswith("price:cheapest") and k.endswith("|worker:c")
    was = before.get(k, Rate())
    assert policy.prior[k] == Rate(was.green * FORGET, was.judged * FORGET + 1)  # older fade


def test_the_trust_is_measured_on_tasks_left_out_whole_with_their_later_rounds() -> None:
    """A later round's brief (other failures, the attempt before it) is the same task: the
    folds that measure the trust keep it with its first round, so a task's own words are
    never on both sides; with or without files in the brief."""
    from conductor_lsp.policy.features import task_features, task_head, task_key

    first = task("bugfix", 7)
    later = Task(
        first.instruction,
        first.files,
        test_failures=FAIL.format(msg="AssertionError: assert 8 == 9"),
        previous="step 0 (small): the tests still fail",
    )
    assert first.brief() != later.brief()
    assert task_head(first.brief()) == task_head(later.brief())
    assert task_head(first.brief()) != task_head(task("bugfix", 8).brief())
    assert task_key(first.brief()) == task_key(later.brief())
    bare = Task(first.instruction, test_failures=FAIL.format(msg="NameError: name 'zebra'"))
    again = Task(first.instruction, previous="step 0 (small): no edit")
    assert task_head(bare.brief()) == task_head(again.brief())
    assert task_head(bare.brief()).strip() == f"## Task\n{first.instruction.strip()}"
    words = [f for f in task_features(bare.brief()) if f.startswith("w:")]
    assert "w:zebra" not in words  # the failures' words are not the task's


def test_a_fit_is_the_same_whatever_order_its_examples_come_in() -> None:
    """AdaGrad's steps and the word dropout's draws follow the order of the examples:
    reading the same recordings in another order must not make another policy."""
    rng = random.Random(5)
    examples = []
    for n in range(12):
        brief, workers = noisy_brief(n, rng), pool("cheap", "dear")
        examples.append(Example(brief, workers, Action("cheap", "direct"), n % 3 == 0, 0.001))
        examples.append(Example(brief, workers, Action("dear", "direct"), n % 4 != 1, 0.02))
    shuffled = examples[::-1]
    rng.shuffle(shuffled)
    first, second = Policy(), Policy()
    fit(first, examples)
    fit(second, shuffled)
    assert first.weights == second.weights
    assert first.trust == second.trust
    assert first.prior == second.prior
    probe = noisy_brief(99, rng)
    for worker in ("cheap", "dear"):
        action = Action(worker, "direct")
        assert first.p_green(probe, action, pool("cheap", "dear")) == second.p_green(
            probe, action, pool("cheap", "dear")
        )
