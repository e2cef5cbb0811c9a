"""A hidden-state policy's readings of briefs, given once for every caller: fitting
(``train --policy``, the benchmark), a session before the policy speaks, online updates
and ``episodes --summary``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..models.hidden import mean_vector
from .features import Hidden, seen_brief
from .predict import Policy

Embed = Callable[[str], Sequence[float]]


def read_briefs(policy: Policy, briefs: Iterable[str], embed: Embed) -> None:
    """Give ``policy`` the model's reading of each brief it has not read yet (blocking:
    a forward pass each)."""
    for brief in policy.unread(briefs):
        policy.see(brief, embed(brief))


def read_with(
    policy: Policy,
    vectors: Mapping[str, Sequence[float]],
    fitted_on: Iterable[str],
    model: str,
    *,
    words: bool,
    bits: int = 64,
    seed: int = 0,
) -> None:
    """Make ``policy`` read hidden states: centred on the mean of the briefs it is fitted
    on (``fitted_on``), and given every brief's reading in ``vectors`` (held-out ones
    too: they are its input, not its labels)."""
    mine = {seen_brief(b) for b in fitted_on}
    mean = mean_vector([v for b, v in vectors.items() if seen_brief(b) in mine])
    policy.hidden = Hidden(model, mean, bits, seed, words)
    for brief, v in vectors.items():
        policy.see(brief, v)
