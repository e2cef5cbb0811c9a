"""``[learn] online = true``: the routing policy learns from every fix job as it ends.

The job's episodes, with their outcomes joined, are read as offline fitting reads them
(``fit.examples_from``); the policy takes a few bounded passes over them on top of what
it knew (``fit.nudge``) and is saved atomically: a crash mid-save leaves the previous
file whole. A subtask that won and is not in the library joins it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..episodes.records import Episode
from .fit import examples_from, nudge
from .predict import Policy
from .reading import Embed, read_briefs


def learn_online(
    path: Path, policy: Policy | None, episodes: Sequence[Episode], embed: Embed | None = None
) -> Policy | None:
    """``policy`` (a new one when None) updated from ``episodes`` and saved to ``path``;
    None when they held no judged candidate. Blocking: a hidden-state policy may read a
    brief with the model (``embed``), so run it in a thread."""
    policy = policy or Policy()
    examples = examples_from(episodes, policy)
    if not examples:
        return None
    if embed is not None:  # the rounds' briefs were read when planned; any other now
        read_briefs(policy, (e.brief for e in examples), embed)
    nudge(policy, examples)
    policy.about["examples"] = int(policy.about.get("examples", 0)) + len(examples)
    policy.about["online_updates"] = int(policy.about.get("online_updates", 0)) + 1
    policy.save(path)
    return policy
