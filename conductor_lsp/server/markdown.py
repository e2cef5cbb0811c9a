"""The last job as a readable Markdown report (``conductor.showPlan``)."""

from __future__ import annotations

from ..jobs import RunResult, outcome_text
from ..plan import access_text


def diagram(result: RunResult) -> str:
    """A mermaid flowchart: one node per step, an arrow for each step another may see."""
    lines = ["```mermaid", "flowchart LR"]
    lines.append('  T(["task"])')
    for i, s in enumerate(result.plan.steps):
        lines.append(f'  S{i}["{i}: {s.worker} ({s.role})"]')
        deps = s.dependencies(i)
        if not deps:
            lines.append(f"  T --> S{i}")
        for d in deps:
            lines.append(f"  S{d} --> S{i}")
    lines.append("```")
    return "\n".join(lines)


def job_report(title: str, result: RunResult, edits: list[str], errors: str) -> str:
    out = [
        f"# {title}",
        "",
        f"**Outcome:** {outcome_text(result.outcome, result.reason)}",
        f"**Plan source:** {result.plan.source}",
        *([f"**Conductor:** {result.plan.spent()}"] if result.plan.call else []),
        *[f"**Note:** {n}" for n in result.plan.notes],
        f"**Time:** {result.seconds:.1f}s",
        f"**Cost:** ${result.cost:.4f}",
        "",
        "## Plan",
        "",
        diagram(result),
        "",
        "| # | worker | role | sees | tokens in/out | $ | subtask |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.steps:
        s = r.step
        state = "" if r.ok else f" ({r.error or r.skipped})"
        out.append(
            f"| {r.index} | {s.worker} | {s.role} | {access_text(s.access)} | "
            f"{r.usage.input_tokens}/{r.usage.output_tokens} | {r.cost:.4f} | "
            f"{s.subtask.replace('|', '/')}{state} |"
        )
    out += ["", "## Edits", ""]
    out += [f"- `{p}`" for p in edits] or ["(none)"]
    if errors:
        out += ["", "## Edit errors", "", "```", errors, "```"]
    if result.output:
        out += ["", "## Final output", "", "````", result.output.strip(), "````"]
    if result.trace_path:
        out += ["", f"Trace: `{result.trace_path}`"]
    return "\n".join(out) + "\n"
