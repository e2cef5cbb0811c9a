"""``[learn] online = true``: the routing policy learns from every fix job as it ends.

Each judged candidate is an example (the round's brief, the pool, the worker and the
wording it was asked in, green or not, and what its call cost); the policy takes a few
passes over them on top of what it knew and is saved atomically: a crash mid-save leaves
the previous file whole. A subtask that won and is not in the library joins it.
"""

from __future__ import annotations

from ..conductor.policy import Action, Example, Policy, index
from ..conductor.policy_reading import read_briefs
from ..conductor.static import BASELINE, RETRY
from ..runtime.session import Session
from .report import FixReport


def examples_of(report: FixReport, policy: Policy) -> list[Example]:
    out = []
    for rnd in report.rounds:
        for attempt in rnd.attempts:
            infos = attempt.job.workers
            for c in rnd.of(attempt):
                if c.verdict is None or not infos:
                    continue
                subtask = BASELINE if c.step.step.subtask == RETRY else c.step.step.subtask
                key = index(policy.wordings, subtask)
                if key is None:
                    if not c.green:
                        continue
                    key = policy.learn_wording(subtask)
                out.append(
                    Example(
                        attempt.brief,
                        infos,
                        Action(c.worker, key),
                        c.green,
                        c.step.cost,
                        c.step.elapsed,
                    )
                )
    return out


def learn_online(session: Session, report: FixReport) -> None:
    """Update and save the session's policy from ``report`` (a policy file is configured);
    blocking (a hidden-state policy may read a brief with the model), so run in a thread."""
    path = session.policy_path
    if path is None:
        return
    policy = session.policy or Policy()
    examples = examples_of(report, policy)
    if not examples:
        return
    # A hidden-state policy: the rounds' briefs were read when planned; any other now.
    if session.reader is not None:
        read_briefs(policy, (e.brief for e in examples), session.reader.embed)
    policy.fit(examples, epochs=5)
    policy.about["examples"] = int(policy.about.get("examples", 0)) + len(examples)
    policy.about["online_updates"] = int(policy.about.get("online_updates", 0)) + 1
    policy.save(path)
    session.policy = policy
