"""The routing policy on a frontier pool, replayed from public per-problem results.

LiveCodeBench publishes, per problem and model, pass@1 in its self-repair scenario
(github:LiveCodeBench/livecodebench.github.io, ``src/mocks/performances_repair.json``:
17 models, 713 problems with difficulty, platform and date). What that pass@1 means, from
LiveCodeBench's own runner (github:LiveCodeBench/LiveCodeBench, README "Self Repair",
``lcb_runner/prompts/self_repair.py``, ``lcb_runner/evaluation/pass_k_utils.py``): each
model is given, per problem, each program it wrote in the code-generation scenario
(``--codegen_n`` of them, n = 10 at temperature 0.2; the o1 models N = 1) with the judge's
verdict on it (wrong answer with the input and the expected output, runtime error, time
limit), and asked once (n = 1) for a fixed program; pass@1 is the share of those fixed
programs that pass every hidden test. Here it stands for that worker's chance that one
call turns a failing program green: the job ``fix`` does.

Each model is a worker priced by ``genai-prices`` at an assumed number of tokens per call
(``TOKENS``, per model family: stated in the output, and moved 2x with ``--scale``). A
test false-positive rate (``--false-positive``) is the chance a wrong answer passes the
tests the loop judges by (public tests are fewer than hidden ones): such an answer is
accepted, paid for, and not solved.

Strategies, all judged by expected values (no sampling): ``best alone`` (static: the
model that solved most on the fitting problems), ``cheapest alone``, the trivial
cascade (the product's ``cascade``: every cheaper worker first, one at a time, in price
order, then the best), ``cascade-2`` (the cheapest, then the best), and the routing
policy with the project's own fit and choice code (``fit``, ``Policy.choose``,
``_without_floor``'s rule and ``order.waves``; the floor lane, the best alone, beside
it), fitted on the older problems by date and judged on the newer (the query shift the
seed promises to survive), at every ``--targets`` and in cost mode.

    python bench/frontier_replay.py --file performances_repair.json --out bench/results/x.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import table
from genai_prices import Usage, calc_price

from conductor_lsp.conductor.static import DIRECT
from conductor_lsp.plan import Lane, Step
from conductor_lsp.policy import Action, Example, Option, Policy, fit, waves
from conductor_lsp.protocols import WorkerInfo
from conductor_lsp.task import Task

#: model in the file -> (genai-prices provider or None, model reference, note).
PRICES: dict[str, tuple[str | None, str, str]] = {
    "Qwen2-Ins-72B": ("openrouter", "qwen/qwen-2-72b-instruct", ""),
    "Qwen2.5-Ins-32B": ("openrouter", "qwen/qwen-2.5-72b-instruct", "priced as Qwen2.5-72B"),
    "GPT-4-Turbo-2024-04-09": (None, "gpt-4-turbo-2024-04-09", ""),
    "GPT-4O-2024-05-13": (None, "gpt-4o-2024-05-13", ""),
    "O1-Preview-2024-09-12 (N=1)": (None, "o1-preview-2024-09-12", ""),
    "O1-Mini-2024-09-12 (N=1)": (None, "o1-mini-2024-09-12", ""),
    "GPT-4O-mini-2024-07-18": (None, "gpt-4o-mini-2024-07-18", ""),
    "GPT-4O-2024-08-06": (None, "gpt-4o-2024-08-06", ""),
    "Claude-3-Haiku": (None, "claude-3-haiku-20240307", ""),
    "Claude-3.5-Sonnet-20240620": (None, "claude-3-5-sonnet-20240620", ""),
    "Claude-3.5-Sonnet-20241022": (None, "claude-3-5-sonnet-20241022", ""),
    "Gemini-Pro-1.5-002": (None, "gemini-1.5-pro-002", ""),
    "Gemini-Flash-1.5-002": (None, "gemini-1.5-flash-002", ""),
    "LLama3.1-8b-Ins": ("openrouter", "meta-llama/llama-3.1-8b-instruct", ""),
    "LLama3.1-70b-Ins": ("openrouter", "meta-llama/llama-3.1-70b-instruct", ""),
    "LLama3.1-405b-Ins-FP8": ("openrouter", "meta-llama/llama-3.1-405b-instruct", ""),
    "Mistral-Large": (None, "mistral-large-latest", ""),
}
#: Tokens one self-repair call takes (prompt, answer), by family: the problem statement,
#: the program and the verdict in; a short explanation and the whole program out; the
#: o1 models bill their hidden reasoning as output too.
TOKENS = {"chat": (1200, 500), "o1-mini": (1200, 500 + 3000), "o1-preview": (1200, 500 + 4000)}


def family(model: str) -> str:
    m = model.lower()
    return "o1-mini" if "o1-mini" in m else "o1-preview" if "o1-preview" in m else "chat"


@dataclass
class Problem:
    qid: str
    date: int
    difficulty: str
    platform: str
    #: model -> (pass@1 as a chance, how many samples it was measured on)
    chance: dict[str, tuple[float, int]]

    def brief(self) -> str:
        """What the policy reads: the problem's name and kind, not its text (the file has
        none). Its name tells problems of one kind apart, as a real task's own words do:
        without it the 356 fitting problems were 9 tasks to the trust folds (difficulty x
        platform), each fold left out whole kinds, and the trust came out 0."""
        kind = f"a {self.difficulty} {self.platform} problem"
        text = f"Repair the failing program {self.qid}: {kind}."
        return Task(text, (), test_failures=f"- {self.qid}: wrong answer").brief()


def load(path: Path) -> list[Problem]:
    data = json.loads(path.read_text())
    out: dict[str, Problem] = {}
    for r in data["performances"]:
        p = out.setdefault(
            r["question_id"],
            Problem(r["question_id"], r["date"], r["difficulty"], r["platform"], {}),
        )
        n = 1 if "(N=1)" in r["model"] else 10
        p.chance[r["model"]] = (float(r["pass@1"]) / 100, n)
    return sorted(out.values(), key=lambda p: (p.date, p.qid))


def call_price(model: str, scale: dict[str, float]) -> float:
    provider, ref, _ = PRICES[model]
    t_in, t_out = TOKENS[family(model)]
    k = scale.get(family(model), 1.0)
    usage = Usage(input_tokens=round(t_in * k), output_tokens=round(t_out * k))
    kw = {"provider_id": provider} if provider else {}
    return float(calc_price(usage, ref, **kw).total_price)  # type: ignore[arg-type]


def make_pool(
    models: Sequence[str], prices: dict[str, float], solved: dict[str, float]
) -> list[WorkerInfo]:
    """The workers, ranked in strength by what they solved on the fitting problems."""
    ranks = {m: i for i, m in enumerate(sorted(models, key=lambda m: solved[m]))}
    return [
        WorkerInfo(
            m, m, prices[m] * 1e6 / 1700, prices[m] * 1e6 / 1700, "openai", strength=ranks[m]
        )
        for m in models
    ]


def examples(
    problems: Sequence[Problem], pool: Sequence[WorkerInfo], prices: dict[str, float]
) -> list[Example]:
    """Every fitting problem's samples as judged candidates: of a model measured on n
    samples, round(p * n) green (capped at 4 a model and problem, to keep fitting fast)."""
    out = []
    for p in problems:
        brief = p.brief()
        for m, (chance, n) in p.chance.items():
            k = min(n, 4)
            greens = round(chance * k)
            for i in range(k):
                out.append(Example(brief, pool, _action(m), i < greens, prices[m], 0.0))
    return out


def _action(model: str) -> Action:
    return Action(model, "direct")


@dataclass
class Tally:
    solved: float = 0.0
    dollars: float = 0.0
    calls: float = 0.0

    def add(
        self, waves_: Sequence[Sequence[str]], p: Problem, prices: dict[str, float], fp: float
    ) -> None:
        """Expected figures of running ``waves_`` (each wave's models at once, a wave only
        when every answer before it was judged red); the first green in order is kept."""
        reach = 1.0
        for wave in waves_:
            self.calls += reach * len(wave)
            self.dollars += reach * sum(prices[m] for m in wave)
            for m in wave:
                chance = p.chance[m][0]
                self.solved += reach * chance
                reach *= (1 - chance) * (1 - fp)  # red, and not passed by mistake


def policy_waves(
    policy: Policy,
    p: Problem,
    pool: Sequence[WorkerInfo],
    best: str,
    prices: dict[str, float],
    prefer: str,
    max_steps: int,
) -> list[list[str]]:
    """What the fix loop runs with this policy and the floor lane: the policy's picks less
    the floor's call, the floor's call, in the waves ``[fix] prefer`` makes."""
    brief = p.brief()
    picks = [a.worker for a, _, _ in policy.choose(brief, pool, max_steps, prefer=prefer)]
    opts = [
        Option(Lane.PLAN, Step(m, DIRECT), prices[m], policy.hopeful(brief, _action(m), pool))
        for m in picks
        if m != best
    ]
    floor = Option(Lane.FLOOR, Step(best, DIRECT), prices[best],
                   policy.hopeful(brief, _action(best), pool))  # fmt: skip
    return [[o.step.worker for o in w if o.step is not None] for w in waves([floor, *opts], prefer)]


def run(args: argparse.Namespace) -> list[dict[str, object]]:
    problems = load(args.file)
    models = sorted(PRICES)
    scale = dict(args.scale or {})
    prices = {m: call_price(m, scale) for m in models}
    cut = len(problems) // 2
    older, newer = problems[:cut], problems[cut:]
    solved_old = {m: sum(p.chance[m][0] for p in older) for m in models}
    pool = make_pool(models, prices, solved_old)
    best = max(models, key=lambda m: solved_old[m])
    cheapest = min(models, key=lambda m: prices[m])
    by_price = sorted(models, key=lambda m: prices[m])
    started = time.monotonic()
    policy = Policy(wordings={"direct": DIRECT})
    fit(policy, examples(older, pool, prices))
    fitted_in = time.monotonic() - started
    fixed: dict[str, list[list[str]]] = {
        "best alone (static)": [[best]],
        "cheapest alone": [[cheapest]],
        "cascade (every cheaper, then best)": [[m] for m in by_price if m != best] + [[best]],
        "cascade-2 (cheapest, then best)": [[cheapest], [best]],
    }
    rows = []
    for fp in args.false_positive:
        for name, plan in fixed.items():
            t = Tally()
            for p in newer:
                t.add(plan, p, prices, fp)
            rows.append(_row(name, fp, t, len(newer)))
        for prefer, targets in (("balanced", args.targets), ("cost", [policy.target])):
            for target in targets:
                policy.target = target
                t = Tally()
                for p in newer:
                    t.add(
                        policy_waves(policy, p, pool, best, prices, prefer, args.max_steps),
                        p,
                        prices,
                        fp,
                    )
                rows.append(_row(f"policy {prefer} @ {target}", fp, t, len(newer)))
            policy.target = 0.8
    meta = {
        "fitting": len(older), "judged": len(newer),
        "split_date": time.strftime("%Y-%m-%d", time.gmtime(newer[0].date / 1000)),
        "best": best, "cheapest": cheapest, "trust": policy.trust,
        "fit_seconds": round(fitted_in, 1), "tokens": TOKENS, "scale": scale,
        "prices": {m: round(prices[m], 6) for m in models},
    }  # fmt: skip
    return [{"meta": meta}, *rows]


def _row(name: str, fp: float, t: Tally, n: int) -> dict[str, object]:
    return {"strategy": name, "false_positive": fp, "solved": round(t.solved, 2), "of": n,
            "dollars": round(t.dollars, 4), "calls": round(t.calls, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, required=True, help="performances_repair.json")
    ap.add_argument("--out", type=Path, help="raw rows (JSONL)")
    ap.add_argument("--false-positive", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--targets", type=float, nargs="+", default=[0.5, 0.7, 0.8, 0.9, 0.95, 0.99])
    ap.add_argument("--max-steps", type=int, default=3)
    ap.add_argument(
        "--scale",
        type=lambda s: (s.split("=")[0], float(s.split("=")[1])),
        nargs="*",
        help="family=factor: a family's tokens per call scaled (chat, o1-mini, o1-preview)",
    )
    args = ap.parse_args()
    rows = run(args)
    meta = rows[0]["meta"]
    print(json.dumps(meta, indent=1))
    body = rows[1:]
    best = {r["false_positive"]: r for r in body if str(r["strategy"]).startswith("best")}
    print(table(
        ["strategy", "false +", "solved", "$", "x best $", "calls"],
        [[r["strategy"], r["false_positive"], f"{r['solved']:.1f}/{r['of']}", r["dollars"],
          r["dollars"] / best[r["false_positive"]]["dollars"], r["calls"]] for r in body],
    ))  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
