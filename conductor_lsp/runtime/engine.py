"""Runs a plan on workers: concurrency by access list, budgets, cancel, trace.

A step waits only for the steps it may see, so independent branches run at
once; results are reported in step order. Every leaf (a step no later step sees)
is a candidate answer, handed to ``on_leaf`` the moment it arrives, so a caller
can judge candidates while the rest still run, and ``finish_early`` once one
will do. A step that repeats an earlier one (same worker, subtask and access)
samples at the sampling temperature instead of answering greedily again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence

from ..context.budget import WindowError, fit_window
from ..context.window import WINDOW_SPARE, cap_files
from ..errors import BudgetExceeded, ConductorError
from ..plan import Plan, Step
from ..protocols import WorkerRequest, WorkerResponse
from ..storage.records import as_data
from ..task import Task
from ..usage import Tally
from ..workers.pool import WorkerPool
from ..workers.ratios import estimate
from .budget import Meter
from .events import EventSink, PlanDone, PlanReady, StepFinished, StepStarted, ignore
from .pulse import step_ticks
from .requests import build_request, repeats, shown_answer
from .results import RunOutcome, RunResult, StepResult
from .trace import Trace


def plan_record(plan: Plan) -> dict[str, object]:
    """The trace's view of a plan: the plan as episodes keep it (its steps, the
    conductor's call and raw text, bounded, and why a fallback did not use that text)."""
    return {"plan": as_data(plan.kept())}


class Engine:
    def __init__(
        self,
        pool: WorkerPool,
        meter: Meter,
        *,
        on_event: EventSink = ignore,
        trace: Trace | None = None,
        sample_temperature: float = 0.8,
    ) -> None:
        self.pool = pool
        self.meter = meter
        self.on_event = on_event
        self.trace = trace or Trace(None)
        self.sample_temperature = sample_temperature
        self._tasks: list[asyncio.Task[None]] = []
        self._cancel_reason = ""
        self._early_reason = ""
        self._budget_reason = ""  # the first step the budget kept from running

    def cancel(self, reason: str = "cancelled by user") -> None:
        """Stop the running plan; ``run`` returns with outcome ``cancelled``."""
        self._cancel_reason = reason
        for t in self._tasks:
            t.cancel()

    def finish_early(self, reason: str) -> None:
        """Stop the steps still running or waiting (a candidate already does the job); the
        job still ends ``done``, with those steps marked skipped for ``reason``."""
        self._early_reason = self._early_reason or reason
        for t in self._tasks:
            t.cancel()

    async def run(
        self,
        plan: Plan,
        task: Task,
        *,
        started: float | None = None,
        on_leaf: Callable[[StepResult], None] | None = None,
        asked: Sequence[Step] = (),
    ) -> RunResult:
        """Run ``plan``; ``started`` is when the job began (before the conductor was asked).
        ``on_leaf`` receives each leaf's result as soon as it has answered; a step that
        repeats one of ``asked`` (the round's earlier calls) samples too."""
        started = time.monotonic() if started is None else started
        self.on_event(PlanReady(plan))
        self.trace.write("plan", **plan_record(plan))
        results = [StepResult(i, s) for i, s in enumerate(plan.steps)]
        finished = [asyncio.Event() for _ in plan.steps]
        tallies: dict[str, Tally] = {}
        leaves = self._candidates(plan) if on_leaf is not None else frozenset()
        sampled = repeats(plan, asked)

        def done(res: StepResult) -> None:
            if res.index in leaves and res.ok and on_leaf is not None:
                on_leaf(res)

        self._tasks = [
            asyncio.create_task(
                self._run_step(plan, task, i, results, finished, tallies, i in sampled, done)
            )
            for i in range(len(plan.steps))
        ]
        if self._early_reason:  # told to finish before it began: nothing more is needed
            for t in self._tasks:
                t.cancel()
        outcome = RunOutcome.DONE
        reason = ""
        try:
            async with asyncio.timeout(self.meter.seconds_left()):
                await asyncio.gather(*self._tasks, return_exceptions=True)
        except TimeoutError:
            outcome, reason = RunOutcome.BUDGET, self.meter.time_spent()
        except asyncio.CancelledError:
            self.cancel("cancelled")
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._finish(plan, results, RunOutcome.CANCELLED, "cancelled", started, tallies)
            raise
        finally:
            for t in self._tasks:
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._cancel_reason:
            outcome, reason = RunOutcome.CANCELLED, self._cancel_reason
        for r in results:
            if not r.answered and not r.error and not r.skipped:
                r.skipped = reason or self._early_reason or "not run"
        if outcome is RunOutcome.DONE:
            outcome, reason = self._outcome(plan, results)
        return self._finish(plan, results, outcome, reason, started, tallies)

    def _candidates(self, plan: Plan) -> frozenset[int]:
        """The leaves whose answers are candidates (a tool's answer is never code)."""
        return frozenset(i for i in plan.leaves() if not self.pool.is_tool(plan.steps[i].worker))

    def _outcome(self, plan: Plan, results: list[StepResult]) -> tuple[RunOutcome, str]:
        errors = [r for r in results if r.error]
        if any(results[i].ok for i in plan.leaves()):
            return RunOutcome.DONE, ""
        if self._budget_reason:
            return RunOutcome.BUDGET, self._budget_reason
        if errors:
            return RunOutcome.FAILED, f"step {errors[0].index} failed: {errors[0].error}"
        return RunOutcome.FAILED, "the last step produced no answer"

    def _finish(
        self,
        plan: Plan,
        results: list[StepResult],
        outcome: RunOutcome,
        reason: str,
        started: float,
        tallies: dict[str, Tally],
    ) -> RunResult:
        conductor = Tally()
        if plan.call is not None:
            conductor.add(plan.call.usage, plan.call.cost)
        result = RunResult(
            plan=plan,
            steps=results,
            outcome=outcome,
            reason=reason,
            seconds=time.monotonic() - started,
            tallies=tallies,
            conductor=conductor,
            trace_path=str(self.trace.path or ""),
        )
        self.trace.write("done", outcome=outcome, reason=reason, cost=result.cost)
        self.on_event(PlanDone(result))
        return result

    async def _run_step(
        self,
        plan: Plan,
        task: Task,
        i: int,
        results: list[StepResult],
        finished: list[asyncio.Event],
        tallies: dict[str, Tally],
        sample: bool = False,
        done: Callable[[StepResult], None] = lambda r: None,
    ) -> None:
        step, res = plan.steps[i], results[i]
        try:
            deps = step.dependencies(i)
            for d in deps:
                await finished[d].wait()
            bad = [d for d in deps if not results[d].ok]
            try:
                if bad:
                    res.skipped = f"step {bad[0]} did not finish"
                else:
                    self.meter.reserve_call()
            except BudgetExceeded as e:
                res.skipped = str(e)
                self._budget_reason = self._budget_reason or e.why
            if res.skipped:
                self._emit_finished(res)
                return
            try:
                # off the event loop: fitting a big task takes up to a second, and the
                # editor's requests are answered on this loop meanwhile
                request = await asyncio.to_thread(self._request, task, plan, i, results, sample)
            except WindowError as e:  # nothing cut fits: say so, send nothing
                res.error = f"{step.worker}'s window: {e}"
                self.trace.write("error", step=i, worker=step.worker, error=res.error)
                self._emit_finished(res)
                return
            self.on_event(StepStarted(i, step))
            self.trace.write(
                "request",
                step=i,
                worker=step.worker,
                system=request.system,
                parts=[p.text for p in request.parts],
                chars_per_token=self.pool.estimate(step.worker),
            )
            await self._call(step, i, request, res, tallies)
            self._emit_finished(res)
            done(res)
        finally:
            finished[i].set()

    def _request(
        self, task: Task, plan: Plan, i: int, results: list[StepResult], sample: bool
    ) -> WorkerRequest:
        """The step's request, all of it fitted to the worker's window when it has one
        (``context.budget``; ``WindowError`` when nothing cut fits)."""
        temperature = self.sample_temperature if sample else None
        worker = self.pool[plan.steps[i].worker].config
        if not worker.context:
            capped = cap_files(task)
            results[i].partial = tuple(f.path for f in capped.files if f.partial)
            return build_request(capped, plan, i, results, temperature)

        def request(t: Task, seen: Mapping[int, str]) -> WorkerRequest:
            return build_request(t, plan, i, results, temperature, seen=seen)

        def size(t: Task, seen: Mapping[int, str]) -> int:
            return request(t, seen).chars()

        count: Callable[[WorkerRequest], int | None] | None
        count = getattr(self.pool[plan.steps[i].worker], "count_tokens", None)
        ratio = self.pool.estimate(plan.steps[i].worker)
        if ratio is not None:  # behind an endpoint: its digits, the rest at the ratio learned
            count = lambda r: estimate(r.text(), ratio)  # noqa: E731

        def tokens(t: Task, seen: Mapping[int, str]) -> int | None:
            return count(request(t, seen)) if count is not None else None

        earlier = plan.steps[i].dependencies(i)
        steps = {j: shown_answer(task, results[j].text) for j in earlier}
        room = worker.context - worker.max_tokens - WINDOW_SPARE
        fitted = fit_window(task, steps, size, room, tokens)
        shown = cap_files(fitted.task, origin=task)  # what a big window left whole
        results[i].partial = tuple(f.path for f in shown.files if f.partial)
        return build_request(shown, plan, i, results, temperature, seen=fitted.steps)

    async def _call(
        self,
        step: Step,
        i: int,
        request: WorkerRequest,
        res: StepResult,
        tallies: dict[str, Tally],
    ) -> None:
        """One worker call: its answer (or error) into ``res``, its bill into the tallies."""
        t0 = time.monotonic()
        ticks = asyncio.create_task(step_ticks(self.on_event, i, step, request.flow))
        try:
            resp: WorkerResponse = await self.pool[step.worker].complete(request)
        except ConductorError as e:
            res.error, res.elapsed = str(e), time.monotonic() - t0
            self.trace.write("error", step=i, worker=step.worker, error=str(e))
            return
        finally:
            ticks.cancel()
        res.text, res.usage, res.cost, res.elapsed, res.cut = (
            resp.text,
            resp.usage,
            resp.cost,
            resp.elapsed,
            resp.cut,
        )
        res.answered = True
        self.pool.reported(step.worker, request, resp.usage)
        self.meter.cost += resp.cost
        tallies.setdefault(step.worker, Tally()).add(resp.usage, resp.cost)
        self.trace.write(
            "response",
            step=i,
            worker=step.worker,
            text=resp.text,
            usage=as_data(resp.usage),
            cost=resp.cost,
            elapsed=resp.elapsed,
            attempts=resp.attempts,
            cut=resp.cut,
        )

    def _emit_finished(self, res: StepResult) -> None:
        self.on_event(
            StepFinished(
                res.index,
                res.step,
                res.usage,
                res.cost,
                res.elapsed,
                self.meter.cost,
                res.error,
                res.skipped,
                res.cut,
            )
        )
