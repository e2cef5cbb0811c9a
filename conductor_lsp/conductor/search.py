"""``search``: a plan of independent leaves, each a candidate answer the tests will judge.

The pool's diversity is free to use once every answer is verified in a sandbox before
it touches the user's files. Round 1 asks every model worker for the fix
(``[search] workers``), the strongest also in a second wording, find the cause and name
the lines first (``wording``), plus ``samples - 1`` sampled repeats of the strongest's
direct call. Later rounds debug from the best candidate so far: the retry on every
model worker. Static's
own call (one call to the strongest, exactly as ``static`` makes it) is always the
first leaf, so search never tries less than static does.

Without failing tests to judge candidates by (an editor rewrite, ``run``), there is
nothing to choose with, and search is static.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig, SearchConfig
from ..plan import Plan, Step
from ..protocols import Check, WorkerInfo
from ..task import Task
from .static import DIRECT, RETRY, StaticConductor, cause_step, static_plan, strongest


def search_plan(
    workers: Sequence[WorkerInfo],
    max_steps: int,
    task: Task | None = None,
    options: SearchConfig | None = None,
) -> Plan:
    """Independent leaves in the order they should start: static's call first.
    ``options`` turn each source of diversity on or off (workers, wording, samples)."""
    if task is None or not task.test_failures:
        return static_plan(workers, max_steps, task)
    o = options or SearchConfig()
    strong = strongest(workers)
    models = [w for w in workers if not w.is_tool]
    others = sorted(
        (w for w in models if w.name != strong.name and w.affordable and o.workers),
        key=lambda w: (-w.strength, -w.price_out, models.index(w)),
    )
    if task.previous:
        steps = [Step(w.name, RETRY, (), "debugging") for w in (strong, *others)]
    else:
        steps = [Step(w.name, DIRECT, (), "generation") for w in (strong, *others)]
        if o.wording:
            steps.insert(min(2, len(steps)), cause_step(strong.name))
        steps += [Step(strong.name, DIRECT, (), "generation")] * (o.samples - 1)
    return Plan(steps=tuple(steps[: max(1, max_steps)]), source="search")


class SearchConductor(StaticConductor):
    name = "search"
    asks_model: ClassVar[bool] = False
    #: Built with the ``[search]`` section too (see ``registry.make_conductor``).
    uses_search: ClassVar[bool] = True

    def __init__(
        self, config: ConductorConfig | None = None, *, search: SearchConfig | None = None
    ) -> None:
        super().__init__(config or ConductorConfig(backend="search"))
        self.options = search or SearchConfig()

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        return "ok", "always available (every model worker, two wordings; the tests choose)"

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        return search_plan(workers, max_steps, task, self.options)
