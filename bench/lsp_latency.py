"""Responsiveness: p50/p99 latency of textDocument/codeAction on a 5,000-line file,
(a) against a bare pygls server that returns one fixed action, idle, and (b) against
conductor-lsp while 3 jobs run on slow stand-in workers. Target: (b) p99 <= 1.5x (a) p99.

    python bench/lsp_latency.py [--requests 300]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, percentile, table
from lsp_editor import run_command, start
from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient
from standin import StandIn

BARE = REPO / "bench" / "bare_server.py"


def big_file(path: Path, lines: int = 5000) -> None:
    path.write_text("".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(lines // 2)))


async def latencies(client: BaseLanguageClient, uri: str, n: int) -> list[float]:
    out = []
    diag = types.Diagnostic(
        range=types.Range(types.Position(2500, 4), types.Position(2500, 12)),
        message="something is off",
        source="lint",
    )
    for i in range(n):
        line = (i * 37) % 5000
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 8)),
            context=types.CodeActionContext(diagnostics=[diag]),
        )
        t0 = time.perf_counter()
        await client.text_document_code_action_async(params)
        out.append(time.perf_counter() - t0)
    return out


async def bare(root: Path, n: int) -> list[float]:
    from lsp_editor import fix_code_action_structuring
    from pytest_lsp.client import make_test_lsp_client

    client = make_test_lsp_client()
    fix_code_action_structuring(client)
    await client.start_io(sys.executable, str(BARE))
    await client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
    )
    uri = (root / "big.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=(root / "big.py").read_text()
            )
        )
    )
    await latencies(client, uri, 20)  # warm-up
    result = await latencies(client, uri, n)
    await client.shutdown_session()
    await client.stop()
    return result


async def busy(root: Path, n: int, standin: StandIn) -> tuple[list[float], int]:
    client, editor = await start(root, "visual-studio-code")
    uri = editor.open(root / "big.py")
    await latencies(client, uri, 20)  # warm-up
    started = []
    for k in range(3):
        other = editor.open(root / f"job{k}.py")
        started.append(await run_command(client, "conductor.edit", {"uri": other}))
    while len(standin.seen) < 3:  # all three jobs are waiting on their workers
        await asyncio.sleep(0.05)
    result = await latencies(client, uri, n)
    running = len(standin.seen)
    await run_command(client, "conductor.cancel", {})
    await client.shutdown_session()
    await client.stop()
    return result, running


async def main_async(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big_file(root / "big.py")
        for k in range(3):
            (root / f"job{k}.py").write_text(f"def job{k}():\n    return {k}\n")
        standin = StandIn(latency=120.0).start()  # workers that take two minutes
        (root / "conductor.toml").write_text(
            '[conductor]\nbackend = "static"\nmax_steps = 1\n[trace]\nenabled = false\n'
            f'[workers.slow]\nprovider = "openai-compatible"\nmodel = "slow"\n'
            f'base_url = "{standin.url}/v1"\nmax_retries = 0\ntimeout = 600\n'
        )
        try:
            a = await bare(root, n)
            b, running = await busy(root, n, standin)
        finally:
            standin.stop()
    rows = [
        [
            "(a) bare pygls, one fixed action, idle",
            n,
            f"{percentile(a, 50) * 1000:.2f} ms",
            f"{percentile(a, 99) * 1000:.2f} ms",
        ],
        [
            f"(b) conductor-lsp, {running} jobs on slow workers",
            n,
            f"{percentile(b, 50) * 1000:.2f} ms",
            f"{percentile(b, 99) * 1000:.2f} ms",
        ],
    ]
    print(table(["server", "requests", "p50", "p99"], rows))
    print(f"\n(b) p99 / (a) p99 = {percentile(b, 99) / percentile(a, 99):.2f} (target <= 1.5)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    asyncio.run(main_async(args.requests))


if __name__ == "__main__":
    main()
