"""One round of the fix loop: each lane's next candidates, in waves, every leaf judged in a
sandbox the moment it answers; the round ends at the first green one.

The round asks each lane what it would run (the floor: static's own call; the other
lane: its strategy's plan, less the floor's call, or a model conductor's plan still to
be written), prices each candidate and, with a routing policy, gives it a chance
(``policy.order``); ``[fix] prefer`` puts them in waves; a wave runs only when those
before it found no green. With a fitted stop rule, a lane whose next round is unlikely
to help stops before it is paid for.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from ..conductor.shapes import ShapeName, chains, joined
from ..conductor.static import static_plan
from ..context.rounds import round_task
from ..plan import Lane, Plan, Step
from ..policy import Option, Policy, Turn, chance_any, estimate, waves
from ..protocols import WorkerInfo
from ..runtime.results import RunOutcome
from ..task import Task
from .candidates import Round
from .follow import Reviews, as_review, follow_ups, onto_floor, reviews_of
from .lanes import LaneState
from .stops import Cancelled
from .wave import Offer, Shared, WaveRunner


class RoundRunner(Shared):
    """Runs the rounds of one job (see ``wave.Shared`` for what they share)."""

    async def run(self, k: int, lanes: list[LaneState], progress: bool) -> Round:
        """Round ``k`` of the active ``lanes``; ``progress``: the last round made some."""
        rnd = Round(k)
        offers = [await self._offer(rnd, lane) for lane in lanes if lane.active]
        floor = next((o for o in offers if o.lane.floor and o.options), None)
        if floor is not None and floor.options[0].step is not None:
            rnd.strongest, rnd.floor_estimate = floor.options[0].step.worker, floor.options[0].price
        offers = [o for o in offers if not self._gives_up(o, k, progress)]
        floors = [o for o in offers if o.lane.floor]
        for o in offers:
            if floors and o not in floors:
                floors[0].options, o.options = onto_floor(floors[0].options, o.options)
        wave = WaveRunner(self, rnd)
        options = [opt for o in offers for opt in o.options]
        reviews = reviews_of(options)
        n = 0
        for group in waves(options, self.session.config.fix.prefer):
            n += 1
            if await wave.run(n, group, offers):
                break
            more = self._follow_ups(rnd, n, offers, reviews)
            if more:  # in the same round: no round is spent on them
                n += 1
                if await wave.run(n, more, offers):
                    break
        for a in rnd.attempts:
            if a.run.outcome is RunOutcome.CANCELLED:
                raise Cancelled(a.run.reason or "cancelled")
        return rnd

    async def _offer(self, rnd: Round, lane: LaneState) -> Offer:
        task = await self._task(rnd, lane)
        session, cfg = self.session, self.session.config
        infos = session.infos(task, self.meter)
        price = _Pricer(infos, task, session.policy)
        if lane.floor:
            plan = (
                await session.plan(task, self.meter, infos)
                if session.planner.floor_only
                else static_plan(infos, cfg.conductor.max_steps, task)
            )
            return Offer(lane, task, plan, [_floor_option(lane.lane, plan, price)])
        if session.planner.asks_model:
            top = max(
                (price(lane.lane, Step(w.name, "x")).price for w in _models(infos)), default=0
            )
            return Offer(lane, task, None, [Option(lane.lane, None, top)])
        plan = await session.plan(task, self.meter, infos)
        if cfg.fix.floor:
            plan = _without_floor(plan, static_plan(infos, cfg.conductor.max_steps, task))
        if not plan.steps:
            return Offer(lane, task, plan, [])
        parts = chains(plan)
        if parts is None:  # leaves that share a step run as one whole plan
            whole = sum(price(lane.lane, s, known=False).price for s in plan.steps)
            return Offer(lane, task, plan, [Option(lane.lane, None, whole)])
        opts = [as_review(price(lane.lane, c.leaf, before=c.before), c) for c in parts]
        return Offer(lane, task, plan, opts)

    def _follow_ups(
        self, rnd: Round, n: int, offers: list[Offer], reviews: Reviews
    ) -> list[Option]:
        """Reviews of wave ``n``'s red answers, and (``[fix] repair``) repairs of its
        answers that held no edit that applied (``follow``)."""
        if not offers:
            return []
        task = offers[0].task
        pool = self.session.infos(task, self.meter)
        files = {o.lane.lane: [f.path for f in o.task.files if f.editable] for o in offers}
        lanes = [o.lane.lane for o in offers]
        calls = follow_ups(rnd, n, lanes, pool, reviews, self.session.config.fix.repair, files)
        if not calls:  # most waves: the task is not rendered again to price nothing
            return []
        price = _Pricer(pool, task, None)
        return [price(lane, s) for lane, s in calls]

    async def _task(self, rnd: Round, lane: LaneState) -> Task:
        """The lane's task: the files its failures involve (read in a sandbox of its start),
        the failures, the repository map's outline of the rest, and what it was told."""
        cfg = self.session.config
        bench = self.verifier.bench
        base = lane.base
        box = await bench.open(base.files, f"r{rnd.index}-{lane.lane or 'plan'}-context")
        try:
            task = await asyncio.to_thread(
                round_task,
                self.instruction,
                box.path,
                base.run,
                cfg.edits.all_deny(),
                named=lane.named,
                repo=self.repo,
                map_chars=cfg.fix.repo_map_chars,
                previous=lane.history,
            )
        finally:
            await bench.discard(box)
        rnd.shown[lane.lane] = [f.path for f in task.files]
        return task

    def _gives_up(self, offer: Offer, k: int, progress: bool) -> bool:
        """Whether the fitted stop rule stops this lane before its round k (never round 1,
        never the floor unless ``[fix] give_up_floor``)."""
        policy, fix = self.session.policy, self.session.config.fix
        lane = offer.lane
        if k < 2 or policy is None or policy.stop is None or (lane.floor and not fix.give_up_floor):
            return False
        turn = Turn(chance_any(offer.options), k, progress, lane.floor)
        chance = policy.stop.chance(turn)
        if chance >= fix.give_up_below:
            return False
        spent = self.report.cost
        lane.stop(
            f"no candidate likely to help (P = {chance:.2f}; ${spent:.4f} spent)", gave_up=True
        )
        self.note(k, f"the {lane.lane or 'strategy'} lane stops: {lane.stopped}")
        return True


class _Pricer:
    """Each step's option on one task: its price and (with a policy) its chance."""

    def __init__(self, pool: Sequence[WorkerInfo], task: Task, policy: Policy | None) -> None:
        self.pool, self.policy = pool, policy
        self.brief, self.tokens = task.brief(), len(task.render()) // 4

    def __call__(
        self, lane: Lane, step: Step, *, known: bool = True, before: tuple[Step, ...] = ()
    ) -> Option:
        policy = self.policy if known else None
        return estimate(lane, step, self.pool, self.brief, self.tokens, policy, before)


def _floor_option(lane: Lane, plan: Plan, price: _Pricer) -> Option:
    """The floor's option: its first call (static's review shape: with its reviewer)."""
    mine = chains(plan)
    if mine is not None and len(mine) == 1 and mine[0].shape().name is ShapeName.REVIEW:
        c = mine[0]
        return as_review(price(lane, c.leaf, before=c.before), c)
    return price(lane, plan.steps[0])


def _models(pool: Sequence[WorkerInfo]) -> list[WorkerInfo]:
    return [w for w in pool if not w.is_tool]


def _without_floor(plan: Plan, floor: Plan) -> Plan:
    """The plan less its first lone step that asks what the floor asks (same worker,
    subtask); a plan whose leaves share a step is kept whole."""
    parts = chains(plan)
    if parts is None:
        return plan
    mine = floor.steps[0]
    for i, c in enumerate(parts):
        s = c.leaf
        if not c.before and s.worker == mine.worker and s.subtask == mine.subtask:
            return dataclasses.replace(plan, steps=joined(parts[:i] + parts[i + 1 :]))
    return plan
