"""Repository map speed: a generated repository of N Python files (default 5,000, in
packages of 50, each module ~60 lines with classes, functions and imports of its
neighbours), mapped from nothing, again with nothing changed, and after 20 files change;
then one map rendered for a failing test (the render parses, with ``ast``, only the
files it shows and the test; the refresh scans every file). The deny list is the
default one, as in ``fix``. Goal: the first map in under 2 s, later ones incremental.

    python bench/repo_map_speed.py [--files 5000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import table

from conductor_lsp.config.schema import Config
from conductor_lsp.context.repo_map import RepoMap

MODULE = (
    '''"""Module {n}."""
from pkg{p}.mod{prev} import Thing{prev}


class Thing{n}:
    """A thing."""

    def __init__(self, size: int = {n}) -> None:
        self.size = size

    def grow(self, by: int) -> int:
        self.size += by
        return self.size

    def shrink(self, by: int) -> int:
        self.size -= by
        return self.size


def make_{n}(count: int, *, name: str = "x{n}") -> list[Thing{n}]:
    out = []
    for i in range(count):
        out.append(Thing{n}(i))
    return out


def total_{n}(things: list[Thing{n}]) -> int:
    return sum(t.size for t in things)


def helper_{n}(a, b, c=None):
    if c is None:
        c = a + b
    return a * b + c
'''
    + "\n# padding\n" * 20
)


def generate(root: Path, files: int) -> None:
    for n in range(files):
        p, m = divmod(n, 50)
        folder = root / f"pkg{p}"
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").touch()
        (folder / f"mod{m}.py").write_text(MODULE.format(n=m, p=p, prev=max(m - 1, 0)))
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text(
        "from pkg0.mod3 import total_3, make_3\n\n"
        "def test_x():\n    assert total_3(make_3(2)) == 2\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="repo-map-") as tmp:
        root = Path(tmp)
        generate(root, args.files)
        repo = RepoMap(root, Config().edits.all_deny())
        rows: list[list[object]] = []
        for label in ("first map", "again, nothing changed"):
            t0 = time.perf_counter()
            parsed = repo.refresh()
            rows.append([label, parsed, f"{time.perf_counter() - t0:.2f}"])
        for n in range(20):
            path = root / f"pkg{n}" / "mod1.py"
            path.write_text(path.read_text() + "\n\ndef added(): ...\n")
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        t0 = time.perf_counter()
        parsed = repo.refresh()
        rows.append(["after 20 files changed", parsed, f"{time.perf_counter() - t0:.2f}"])
        t0 = time.perf_counter()
        text = repo.render(["tests/test_x.py"], 6000)
        parsed = sum(o.parsed for o in repo.files.values())
        rows.append(
            [f"render 6,000 chars ({len(text)})", parsed, f"{time.perf_counter() - t0:.2f}"]
        )
    print(f"{args.files} files\n")
    print(table(["step", "files read (parsed)", "seconds"], rows))


if __name__ == "__main__":
    main()
