"""Edit speed: SEARCH/REPLACE blocks through the pure edits API on big files.

Prints time and peak memory for 500 blocks (exact, re-indented and fuzzy) on a
1 MB file, and how time grows with file size (0.1, 1, 4 MB): the ratio of time
per MB stays flat when the work is linear, and would grow with size if quadratic.

    python bench/edit_apply.py
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc

from _common import table

from conductor_lsp.edits import apply_output


def make_file(target_bytes: int, seed: int = 0) -> tuple[str, int]:
    rng = random.Random(seed)
    parts, n = [], 0
    size = 0
    while size < target_bytes:
        body = "".join(
            f"        value_{n}_{k} = compute_{rng.randint(0, 10**6)}(x, {k})  # step {k}\n"
            for k in range(6)
        )
        func = (
            f"class Widget{n}:\n    def method_{n}(self, x):\n{body}"
            f"        return value_{n}_5 + {n}\n\n\n"
        )
        parts.append(func)
        size += len(func)
        n += 1
    return "".join(parts), n


def blocks(text: str, count: int, n_funcs: int, seed: int = 1) -> str:
    """Exact, re-indented and near-miss (fuzzy) SEARCH blocks over distinct functions."""
    rng = random.Random(seed)
    picks = rng.sample(range(n_funcs), min(count, n_funcs))
    out = []
    lines = text.splitlines(keepends=True)
    index = {ln.strip(): i for i, ln in enumerate(lines) if ln.strip().startswith("def method_")}
    for j, n in enumerate(picks):
        start = index[f"def method_{n}(self, x):"]
        body = lines[start : start + 4]
        search = "".join(body)
        kind = j % 3
        if kind == 1:  # the model dropped the class indentation
            search = "".join(ln[4:] if ln.startswith("    ") else ln for ln in body)
        elif kind == 2:  # the model misremembered one line
            body = list(body)
            body[2] = body[2].replace("# step 1", "# step one")
            search = "".join(body)
        replace = search.replace("(x, 0)", "(x, 100)")
        out.append(f"big.py\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n")
    return "".join(out)


def run(size_mb: float, count: int) -> tuple[float, float, int, list[str]]:
    text, n = make_file(int(size_mb * 1_000_000))
    output = blocks(text, count, n)
    tracemalloc.start()
    t0 = time.perf_counter()
    result = apply_output({"big.py": text}, output)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if not result.ok:
        raise SystemExit(f"edits failed: {result.report()[:500]}")
    return seconds, peak / 1e6, len(result.matches), result.matches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--blocks", type=int, default=500)
    args = ap.parse_args()
    rows = []
    seconds, peak, _, matches = run(1.0, args.blocks)
    rows.append(_row("1 MB (headline)", 1.0, seconds, peak, matches, None))
    base = None
    for size in (0.1, 1.0, 4.0):  # the same 200 blocks on growing files
        seconds, peak, _, matches = run(size, 200)
        base = base or seconds / size
        rows.append(_row(f"{size:g} MB", size, seconds, peak, matches, base))
    print(
        table(
            [
                "file",
                "blocks",
                "exact",
                "re-indented",
                "fuzzy",
                "time",
                "peak memory",
                "time per MB vs 0.1 MB",
            ],
            rows,
        )
    )


def _row(
    label: str, size: float, seconds: float, peak: float, matches: list[str], base: float | None
) -> list[object]:
    count = {k: sum(1 for m in matches if m.startswith(k)) for k in ("exact", "indent", "fuzzy")}
    ratio = f"{seconds / size / base:.2f}" if base else "-"
    return [
        label,
        len(matches),
        count["exact"],
        count["indent"],
        count["fuzzy"],
        f"{seconds * 1000:.0f} ms",
        f"{peak:.0f} MB",
        ratio,
    ]


if __name__ == "__main__":
    main()
