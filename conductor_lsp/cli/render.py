"""Plans, costs and progress as rich tables or plain lines, for the CLI."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..config.schema import Config
from ..jobs import FixReport, RunResult, model_report, outcome_text
from ..plan import Plan, access_text
from ..usage import Tally, Usage, total


def plan_table(plan: Plan) -> Table:
    table = Table(title=f"Plan ({plan.source})", show_lines=False)
    for col in ("#", "worker", "role", "sees", "subtask"):
        table.add_column(col, overflow="fold")
    for i, s in enumerate(plan.steps):
        table.add_row(str(i), s.worker, s.role, access_text(s.access), s.subtask)
    return table


def _cached(usage: Usage) -> str:
    """Cached input tokens, or "-" where the provider does not say."""
    return "-" if usage.cached_input_tokens is None else str(usage.cached_input_tokens)


def cost_table(tallies: dict[str, Tally], conductor: Tally | None = None) -> Table:
    """Calls, tokens and $ per worker, the conductor's own row, and the total."""
    table = Table(title="Cost")
    for col in ("model", "calls", "tokens in", "cached", "tokens out", "$"):
        table.add_column(col, justify="right" if col != "model" else "left")
    rows = list(tallies.items())
    if conductor is not None and conductor.calls:
        rows.append(("conductor", conductor))
    for name, t in [*rows, ("total", total(dict(rows)))]:
        table.add_row(
            name,
            str(t.calls),
            str(t.usage.input_tokens),
            _cached(t.usage),
            str(t.usage.output_tokens),
            f"{t.cost:.4f}",
            style="bold" if name == "total" else None,
        )
    return table


def plan_notes(plan: Plan) -> list[str]:
    """What to say under a plan: what the conductor cost, and its notes (why it fell back)."""
    return [line for line in (plan.spent(), *(f"note: {n}" for n in plan.notes)) if line]


def print_result(console: Console, result: RunResult) -> None:
    console.rule("output")
    console.print(result.output or "(no output)", markup=False, highlight=False)
    for problem in result.problems():
        console.print(f"warning: {problem}", style="yellow", markup=False, highlight=False)
    console.print(cost_table(result.tallies, result.conductor))
    if result.trace_path:
        console.print(f"trace: {result.trace_path}", markup=False)


def print_model_stats(console: Console) -> None:
    """How the in-process models loaded and decoded in this job (none: nothing)."""
    for line in model_report():
        console.print(f"model: {line}", markup=False, highlight=False)


def print_fix_report(console: Console, report: FixReport) -> None:
    """The fix loop's final report: rounds, plans, candidates, cost, time, diff, checkpoint."""
    console.rule("fix report")
    for rnd in report.rounds:
        for attempt in rnd.attempts:
            lane = f" ({attempt.lane})" if attempt.lane else ""
            console.print(f"round {rnd.index}{lane}:", markup=False, highlight=False)
            console.print(plan_table(attempt.run.plan))
            for line in plan_notes(attempt.run.plan):
                console.print(f"  {line}", markup=False, highlight=False)
            for c in rnd.of(attempt):
                v = c.verdict
                if v is None:
                    text = "not judged (another candidate was green first)"
                else:
                    tests = "not run" if v.tests is None else v.tests.state()
                    text = f"edited {', '.join(v.applied) or 'nothing'}; tests {tests}"
                console.print(f"  candidate {c.label}: {text}", markup=False, highlight=False)
                if v is not None and v.errors:
                    console.print(f"    edit errors: {v.errors}", markup=False, highlight=False)
    if report.tallies or report.conductor.calls:
        console.print(cost_table(report.tallies, report.conductor))
    if report.diff:
        console.rule("diff" if report.written else "diff (not written)")
        console.print(report.diff, markup=False, highlight=False)
    console.print(
        f"outcome: {outcome_text(report.outcome, report.reason)}",
        markup=False,
        highlight=False,
    )
    console.print(f"tests: {report.tests()} in {report.seconds:.1f}s", markup=False)
    console.print(f"spent: {report.spent()}", markup=False, highlight=False)
    judged = [c for c in report.candidates if c.verdict is not None]
    if report.candidates:
        console.print(
            f"candidates: {len(report.candidates)} answered, {len(judged)} judged in sandboxes, "
            f"{sum(1 for c in judged if c.verdict and c.verdict.green)} green",
            markup=False,
        )
    console.print(
        f"written: {', '.join(report.written) if report.written else 'nothing'}", markup=False
    )
    for line in report.rejected:
        console.print(f"rejected: {line}", markup=False, highlight=False)
    if report.kept:
        console.print(f"kept: {report.kept}", markup=False, highlight=False)
    console.print(
        f"checkpoint (undo with `conductor-lsp undo`): {report.checkpoint.ref}",
        markup=False,
        highlight=False,
    )


SMOKE_TEST_NOTE = (
    "note: this answer came from SmolLM2-135M, the offline smoke-test default (135M "
    "parameters: it checks the install, its code is poor). For real work, "
    "`conductor-lsp init` adds your own models (API keys, Ollama, llama.cpp, vLLM)."
)


def smoke_test_default(config: Config) -> bool:
    """Whether the pool is the embedded default alone (no workers of the user's own)."""
    return any(s.startswith("auto: worker local =") for s in config.sources)
