"""Two-fold on recorded runs: per fold a policy (and its stop rule) fitted on half of the
suite's tasks, then every strategy replayed on the other half, side by side, priced.

The data is `eval` runs of the suite (``--from-eval``, repeatable): their episodes are
what each fold's policy learns from (only its training half's tasks), their traces what
the replay answers from (``bench/replay.py``: a request no run recorded is a miss, an
empty answer, counted per strategy, so a row with misses is a lower bound on solved and
$). Record ``static``, ``single:NAME`` for each cheaper worker and ``search`` first: they
ask every first-round request the policies can. ``--live`` runs the same folds on the
config's models instead: the confirmation of a replayed row (and a recording).

    python bench/two_fold.py --from-eval runs/tasks.jsonl --config bench/configs/local_pair.toml \\
        --strategy static,search,cascade,policy,policy@cost,policy@latency,policy+give_up_floor

``--online-from RUN`` (repeatable) adds the query shift: a policy fitted on another
suite's recorded runs meets this suite, every task in order, with ``[learn] online =
true``; compare its $ per solved with the folds' in-suite policy.

``NAME@MODE`` sets ``[fix] prefer = MODE``; ``+KEY`` sets the ``[fix]`` key true,
``+KEY=NUMBER`` to the number (``policy+give_up_below=0.2``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, episodes_of, folds, table
from replay import replay_config, strategies

from conductor_lsp import load_config
from conductor_lsp.configure.load import layered
from conductor_lsp.eval import TaskResult, evaluate, load_suite
from conductor_lsp.eval.run import read_results
from conductor_lsp.policy import Policy, examples_from, fit, scores
from conductor_lsp.policy.offline import stop_rule
from conductor_lsp.workers import replay


def fitted(episodes: list[Any], train: list[Any] | None, path: Path) -> str:
    """The fold's policy (``train``'s tasks; None: all), saved at ``path``; returns what
    it was fitted on."""
    mine = [e for e in episodes if train is None or any(t.instruction in e.task for t in train)]
    policy = Policy()
    examples = examples_from(mine, policy)
    started = time.monotonic()
    fit(policy, examples)
    policy.stop = stop_rule(mine, policy)
    seconds = time.monotonic() - started
    policy.save(path)
    turns = policy.stop.turns if policy.stop is not None else 0
    greens = sum(e.green for e in examples)
    briefs = len({e.brief for e in examples})
    tasks = f"{len(train)} tasks" if train is not None else f"{briefs} briefs"
    return (
        f"{len(examples)} verdicts ({greens} green) of {tasks}, "
        f"weights trusted {policy.trust:g} against the base rates, "
        f"stop rule on {turns} rounds, {seconds:.2f} s"
    )


def sureness(episodes: list[Any], held: list[Any], path: Path) -> str:
    """Log loss on the held-out half's verdicts: the fold's weights alone, its base rates
    alone, and the two as far as the fit trusted its weights (lower is better)."""
    policy = Policy.load(path)
    mine = [e for e in episodes if any(t.instruction in e.task for t in held)]
    examples = examples_from(mine, policy)
    trust = policy.trust
    losses = []
    for label, t in (("weights alone", 1.0), ("base rates alone", 0.0), ("as fitted", trust)):
        policy.trust = t
        losses.append(f"{label} {scores(policy, examples).get('log_loss', float('nan')):.3f}")
    return f"held-out log loss on {len(examples)} verdicts: " + ", ".join(losses)


def chosen(text: str, workers: Any, policy: Path) -> dict[str, dict[str, Any]]:
    """Strategies with ``+KEY`` (true) and ``+KEY=NUMBER`` suffixes as ``[fix]`` keys."""
    out = {}
    for item in [s.strip() for s in text.split(",") if s.strip()]:
        name, *flags = item.split("+")
        (layer,) = strategies(name, workers, str(policy)).values()
        fix = {k: float(v) if v else True for k, _, v in (f.partition("=") for f in flags)}
        out[item] = layered(layer, {"fix": fix}) if fix else layer
    return out


async def fold(
    args: argparse.Namespace,
    base: Any,
    held: list[Any],
    layers: dict[str, Any],
    out: Path,
    *,
    by_task: bool = False,
) -> list[tuple[TaskResult, int]]:
    """Every strategy on the held-out tasks in order, one at a time (so misses are per
    strategy, and an online policy learns task by task). ``by_task``: every strategy on
    a task before the next, into one file a second call resumes (``by-task.jsonl``)."""
    rows: list[tuple[TaskResult, int]] = []
    seen = [0]

    def count(r: TaskResult) -> None:  # one task at a time: the misses since the last
        total = sum(replay.MISSES.values())
        rows.append((r, total - seen[0]))
        seen[0] = total

    if by_task:
        replay.MISSES.clear()
        done = await evaluate(held, layers, base, out=out / "by-task.jsonl", on_result=count,
                              max_iterations=args.rounds, order="tasks", resume=True)  # fmt: skip
        ran = {(r.task, r.strategy) for r, _ in rows}  # a resumed row's misses were its call's
        return rows + [(r, 0) for r in done if (r.task, r.strategy) not in ran]
    for name, layer in layers.items():
        path = out / f"{name}.jsonl"
        path.unlink(missing_ok=True)
        replay.MISSES.clear()
        seen[0] = 0
        await evaluate(held, {name: layer}, base, out=path, max_iterations=args.rounds,
                       on_result=count)  # fmt: skip
    return rows


async def online(
    args: argparse.Namespace, base: Any, tasks: list[Any], out: Path, notes: list[str]
) -> list[tuple[TaskResult, int]]:
    """A policy fitted on another suite's runs (``--online-from``) meets this one: every
    task in order, ``[learn] online = true`` (the query shift, on recorded answers)."""
    other = episodes_of(args.online_from)
    policy = out / "online-policy.json"
    notes.append(f"online: policy fitted on {fitted(other, None, policy)} of the other suite")
    (layer,) = strategies("policy", base.workers, str(policy)).values()
    learning = {ONLINE: layered(layer, {"learn": {"online": True}})}
    return await fold(args, base, tasks, learning, out / "online")


#: The query-shift row's name.
ONLINE = "policy fitted on the other suite, online"


def bound(runs: list[Path], names: set[str]) -> str:
    """What any strategy that keeps the floor's rounds must spend at least, from the
    recordings: a cheaper worker's (``single:*``) first answer where it was green; else
    static's first call (the floor's first round runs when nothing cheaper is green) where
    any recorded run solved the task; else static's whole trajectory (the floor runs its
    rounds as static would). A cost goal under it needs ``give_up_floor``."""
    rows = [(p, r) for p in runs for r in read_results(p.read_text()) if r.task in names]
    static = {r.task: (p, r) for p, r in rows if r.strategy == "static"}
    solved = {r.task for _, r in rows if r.solved}
    cheap: dict[str, float] = {}
    for _, r in rows:
        if r.strategy.startswith("single:") and r.solved and r.rounds == 1:
            cheap[r.task] = min(r.cost, cheap.get(r.task, r.cost))
    if not static:
        return "bound: no recorded static run"
    paid = 0.0
    for task, (run, r) in static.items():
        if task in cheap:
            paid += cheap[task]
        else:
            paid += _first_round(run, r) if task in solved else r.cost
    total = sum(r.cost for _, r in static.values()) or 1.0
    return (
        f"bound (keeping the floor's rounds, at least): ${paid:.4f}, {paid / total:.2f}x "
        f"the recorded static's ${total:.4f}"
    )


def _first_round(run: Path, row: TaskResult) -> float:
    """The bill of a recorded row's first round: its first job's trace (one per round)."""
    recorded = Path(row.traces)
    folder = traces_of(run) / recorded.parent.name / recorded.name
    jobs = sorted(folder.glob("*.jsonl"))
    if not jobs:
        return row.cost
    done = [json.loads(line) for line in jobs[0].read_text().splitlines()]
    return max((e.get("cost", 0.0) for e in done if e.get("type") == "done"), default=row.cost)


def traces_of(run: Path) -> Path:
    """The traces folder an ``eval`` run wrote beside its results (``eval.run``)."""
    return run.parent / f"{run.stem}-traces"


def report(rows: list[tuple[TaskResult, int]], notes: list[str]) -> None:
    names = list(dict.fromkeys(r.strategy for r, _ in rows))
    static = sum(r.cost for r, _ in rows if r.strategy == "static") or 1.0
    won = {r.task for r, _ in rows if r.strategy == "static" and r.solved}
    cells = []
    for name in names:
        mine = [r for r, _ in rows if r.strategy == name]
        missed = [m for r, m in rows if r.strategy == name and m]
        cost = sum(r.cost for r in mine)
        lost = sorted(won - {r.task for r in mine if r.solved})
        cells.append([
            name, f"{sum(r.solved for r in mine)}/{len(mine)}", f"{cost:.4f}",
            f"{cost / static:.2f}x", sum(r.worker_calls for r in mine),
            sum(r.tokens for r in mine), f"{sum(r.seconds for r in mine):.0f} s",
            ", ".join(lost) or "-", f"{sum(missed)} in {len(missed)} tasks",
        ])  # fmt: skip
    head = ["strategy", "solved", "$", "vs static", "calls", "tokens", "time",
            "lost vs static", "misses"]  # fmt: skip
    print(table(head, cells))
    print("\n".join(notes))


async def main_async(args: argparse.Namespace) -> None:
    tasks = load_suite(Path(args.suite))
    if args.tasks:
        tasks = [t for t in tasks if t.name in set(args.tasks.split(","))]
    runs = [Path(p) for p in args.from_eval]
    episodes = episodes_of(runs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[TaskResult, int]] = []
    notes = []
    with tempfile.TemporaryDirectory(prefix="two-fold-traces-") as tmp:
        for i, run in enumerate(runs):  # one folder the replay workers read
            (Path(tmp) / str(i)).symlink_to(traces_of(run).resolve(), target_is_directory=True)
        base = (
            load_config(Path.cwd(), Path(args.config))
            if args.live
            else replay_config(Path(args.config), Path(tmp))
        )
        for k, (held, train) in enumerate(folds(tasks, 2)):
            policy = out / f"fold-{k + 1}-policy.json"
            notes.append(f"fold {k + 1}: policy fitted on {fitted(episodes, train, policy)}")
            notes.append(f"fold {k + 1}: {sureness(episodes, held, policy)}")
            layers = chosen(args.strategy, base.workers, policy)
            rows += await fold(args, base, held, layers, out / f"fold-{k + 1}")
            print(f"fold {k + 1} done", flush=True)
        if args.online_from:
            rows += await online(args, base, tasks, out, notes)
    notes.append(bound(runs, {t.name for t in tasks}))
    report(rows, notes)
    save(rows, out)


def save(rows: list[tuple[TaskResult, int]], out: Path) -> None:
    """Every row as ``eval`` writes it, with its misses, in ``out/rows.jsonl``."""
    (out / "rows.jsonl").write_text(
        "".join(json.dumps(r.__dict__ | {"misses": m}) + "\n" for r, m in rows)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--from-eval", action="append", required=True, help="a recorded eval run")
    ap.add_argument("--config", required=True, help="the config the runs were recorded with")
    ap.add_argument("--suite", default=str(REPO / "bench" / "tasks"))
    ap.add_argument("--strategy", default="static,search,cascade,policy,policy@cost")
    ap.add_argument("--tasks", help="comma-separated task names (default: all)")
    ap.add_argument("--rounds", type=int, default=2, help="max_iterations")
    ap.add_argument("--out", default="/tmp/two-fold")
    ap.add_argument("--live", action="store_true", help="call the config's models, not replay")
    ap.add_argument("--online-from", action="append", default=[],
                    help="another suite's run: its policy meets this suite, online")  # fmt: skip
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
