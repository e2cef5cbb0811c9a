"""Recorded answers, read again by today's edit parser: which answers that were refused
("a code block without a file path", ...) now apply, and which of those turn the tests
green, without calling a model. The traces come from ``bench/fix_quality.py`` runs
(``--out F`` writes them under ``F-traces/STRATEGY/TASK/``); only first rounds are
replayed, since they start from the task as it is in the suite.

    python bench/replay_answers.py --traces /tmp/run-traces --suite bench/tasks
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conductor_lsp.edits.apply import apply_output


def first_round(task_dir: Path) -> list[dict[str, object]]:
    files = sorted(task_dir.glob("*.jsonl"))
    return [json.loads(line) for line in files[0].read_text().splitlines()] if files else []


def replay(traces: Path, suite: Path) -> dict[str, int]:
    counts = {"answers": 0, "applied then": 0, "applied now": 0, "rescued": 0, "rescued green": 0}
    for task_dir in sorted(p for p in traces.glob("*/*") if p.is_dir()):
        source = suite / task_dir.name
        if not source.is_dir():
            continue
        records = first_round(task_dir)
        verdicts = {r["step"]: r for r in records if r.get("type") == "verdict"}
        files = {
            p.relative_to(source).as_posix(): p.read_text()
            for p in source.rglob("*.py")
            if "__pycache__" not in p.parts
        }
        task = next((r for r in records if r.get("type") == "task"), {})
        shown = re.findall(r"^## File `([^`]+)`( \(read only\))?$", str(task.get("task", "")), re.M)
        # The files the round was repairing, as its brief showed them (read-only ones are not).
        targets = [path for path, ro in shown if not ro] or [
            f for f in files if not Path(f).name.startswith("test_")
        ]
        readonly = {path for path, ro in shown if ro}
        for r in records:
            if r.get("type") != "response" or r.get("step") not in verdicts:
                continue
            counts["answers"] += 1
            then = bool(verdicts[r["step"]].get("applied"))
            counts["applied then"] += then
            result = apply_output(files, str(r.get("text") or ""), targets=targets)
            touched = set(result.new_texts)
            now = result.ok and bool(touched) and not touched & readonly
            counts["applied now"] += now
            if now and not then:
                counts["rescued"] += 1
                counts["rescued green"] += _green(source, result.new_texts)
    return counts


def _green(source: Path, new_texts: dict[str, str]) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "t"
        shutil.copytree(source, work)
        for rel, text in new_texts.items():
            (work / rel).write_text(text)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=work,
            capture_output=True,
            timeout=120,
        )
        return run.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, action="append", required=True)
    ap.add_argument("--suite", type=Path, required=True)
    args = ap.parse_args()
    total: dict[str, int] = {}
    print("| traces | answers | applied then | applied now | rescued | rescued green |")
    print("|---|---|---|---|---|---|")
    for t in args.traces:
        c = replay(t, args.suite)
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
        print(f"| {t.name} | " + " | ".join(str(v) for v in c.values()) + " |")
    if len(args.traces) > 1:
        print("| all | " + " | ".join(str(v) for v in total.values()) + " |")


if __name__ == "__main__":
    main()
