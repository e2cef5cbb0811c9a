"""A code block of definitions: the file's own replace theirs, new ones go beside them.

Small models answer a feature ("add update_in") with the new function alone under the
file's path, and a fix with the fixed function plus a helper it calls; both used to be
refused ("keeps 0 of the 3 top-level names"). A renamed function or a test is still
refused, with a message that says which.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conductor_lsp.edits import apply_output

ANSWERS = Path(__file__).resolve().parents[1] / "answers"

CORE = '''"""Dictionary helpers."""

import operator


def merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


def valmap(func, d):
    return {k: func(v) for k, v in d.items()}


def keymap(func, d):
    return {func(k): v for k, v in d.items()}
'''

STATS = """def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    return xs[len(xs) // 2]


def spread(xs):
    return max(xs) - min(xs)


if __name__ == "__main__":
    print(median([3, 1, 2]))
"""


def names(text: str) -> list[str]:
    return [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


def test_a_new_function_under_the_files_path_is_added_at_the_end() -> None:
    text = (ANSWERS / "new_function_named_path.txt").read_text()  # 1.5B, a feature task
    path = "toolz/dicttoolz/core.py"
    r = apply_output({path: CORE}, text, targets=[path])
    assert r.failures == [] and r.matches == ["new: update_in"]
    new = r.new_texts[path]
    assert new.startswith(CORE) and names(new) == ["merge", "valmap", "keymap", "update_in"]
    assert "    return {func(k): v for k, v in d.items()}\n\n\ndef update_in(" in new


def test_a_bare_block_of_new_functions_only_is_still_refused() -> None:
    block = "```python\ndef mode(xs):\n    return max(set(xs), key=xs.count)\n```\n"
    r = apply_output({"stats.py": STATS}, block, targets=["stats.py"])
    assert not r.new_texts and "keeps 0 of the 3 top-level names" in r.report()
    named = "stats.py\n" + block  # the same definitions under the file's path: added
    r = apply_output({"stats.py": STATS}, named, targets=["stats.py"])
    assert names(r.new_texts["stats.py"]) == ["mean", "median", "spread", "mode"]
    demo = '\n\n\nif __name__ == "__main__":\n    print(median([3, 1, 2]))\n'
    assert r.new_texts["stats.py"].endswith(demo)  # the new one above the file's demo


def test_a_fix_with_a_helper_puts_the_helper_where_the_block_had_it() -> None:
    block = (
        "```python\nimport statistics\nfrom stats import mean\n\n\n"
        "def _middle(xs):\n    return statistics.median(xs)\n\n\n"
        "def median(xs):\n    return _middle(sorted(xs))\n\n\n"
        "def _check(xs):\n    assert xs\n\n\n"
        'if __name__ == "__main__":\n    print(median([1, 2]))\n```\n'
    )
    r = apply_output({"stats.py": STATS}, block, targets=["stats.py"])
    assert r.failures == [] and r.matches == ["block(defs: median + new: _middle, _check)"]
    new = r.new_texts["stats.py"]
    assert names(new) == ["mean", "_middle", "median", "_check", "spread"]
    assert new.startswith("import statistics\n\n\ndef mean")  # the import, not the self-import
    assert "from stats" not in new and new.count("__main__") == 1  # the block's demo left out
    assert "return _middle(sorted(xs))\n\n\ndef _check(xs):\n    assert xs\n\n\ndef spread" in new


def test_a_renamed_function_or_a_test_is_refused_and_says_which() -> None:
    renamed = "stats.py\n```python\ndef median_fixed(xs):\n    return 0\n```\n"
    r = apply_output({"stats.py": STATS}, renamed, targets=["stats.py"])
    assert not r.new_texts
    assert "defines median_fixed where stats.py has median: keep the file's names" in r.report()
    test = "stats.py\n```python\ndef test_median():\n    assert True\n```\n"
    r = apply_output({"stats.py": STATS}, test, targets=["stats.py"])
    assert not r.new_texts and "defines the test test_median" in r.report()
