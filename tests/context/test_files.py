"""What a fix round shows: the files the failures name and the modules those import,
relative imports included (a package's ``__init__.py`` re-exports what its modules
define, and the module is where the change goes)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from conductor_lsp import TestRun, run_tests
from conductor_lsp.context.files import context_files, local_imports


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def shown_after(root: Path, args: str, timeout: float) -> tuple[TestRun, dict[str, bool]]:
    """Run ``python ARGS`` in ``root`` for real; the run and what a round would show (path:
    editable)."""
    run = asyncio.run(run_tests(f"{sys.executable} {args}", root, timeout))
    return run, {f.path: f.editable for f in context_files(root, run, [], [])}


def test_a_package_that_re_exports_shows_the_module_the_name_must_be_added_to(
    tmp_path: Path,
) -> None:
    root = write(
        tmp_path,
        {
            "dz/__init__.py": "from .core import merge\n",
            "dz/core.py": "def merge(a, b):\n    return {**a, **b}\n",
            "dz/tests/__init__.py": "",
            "dz/tests/test_core.py": "from dz import merge, assoc\n\n\n"
            "def test_assoc():\n    assert assoc({}, 'a', 1) == {'a': 1}\n",
        },
    )
    run, shown = shown_after(root, "-m pytest -q -p no:cacheprovider dz/tests/test_core.py", 60)
    assert not run.passed  # the name is missing: an ImportError while collecting
    assert shown.get("dz/core.py") is True, shown
    assert shown.get("dz/tests/test_core.py") is False, shown


def test_relative_imports_resolve_from_the_importing_file(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/a.py": "",
            "src/pkg/sub/__init__.py": "",
            "src/pkg/sub/b.py": "",
            "src/pkg/sub/c.py": "",
            "a.py": "",  # the same name at the root is not what ``from ..a`` means
            "src/pkg/sub/see.py": "",  # an alias names no module
        },
    )
    text = (
        "from __future__ import annotations\n"
        "from ..a import x\n"
        "from . import b, c as see\n"
        "from .c import (\n    y,\n)\n"
        "import os\n"
    )
    found = local_imports(root, text, "src/pkg/sub/mod.py")
    assert sorted(set(found)) == ["src/pkg/a.py", "src/pkg/sub/b.py", "src/pkg/sub/c.py"]
    assert local_imports(root, "from ...... import a\n", "src/pkg/sub/mod.py") == []
    assert local_imports(root, "from .b import z\n") == []  # no importing file: unknown
    absolute = local_imports(root, "from pkg.sub import b, nothing\n", "tests/test_b.py")
    assert absolute == ["src/pkg/sub/__init__.py", "src/pkg/sub/b.py"]
    wrapped = "from pkg.sub import (\n\tnothing,  # not a module\n\tc)\n"
    assert local_imports(root, wrapped) == ["src/pkg/sub/__init__.py", "src/pkg/sub/c.py"]


def test_a_name_the_test_package_defines_leads_to_the_library_it_stands_for(
    tmp_path: Path,
) -> None:
    """``from . import tomllib``: no module of that name, the test package's
    ``__init__.py`` defines it (``import tomli as tomllib``), and the parser it re-exports
    is the code under test. A test failing by assertion names no frame in it."""
    root = write(
        tmp_path,
        {
            "src/tomli/__init__.py": "from ._parser import loads\n",
            "src/tomli/_parser.py": "def loads(s):\n    return {}  # PARSER\n",
            "tests/__init__.py": "import tomli as tomllib\n",
            "tests/helpers.py": "",
            "tests/test_data.py": "from . import helpers, tomllib\n\n\n"
            "def test_loads():\n    assert tomllib.loads('a = 1') == {'a': 1}\n",
        },
    )
    found = local_imports(root, (root / "tests/test_data.py").read_text(), "tests/test_data.py")
    assert found == ["tests/helpers.py", "tests/__init__.py"]
    modules = local_imports(root, "from . import helpers\n", "tests/test_data.py")
    assert modules == ["tests/helpers.py"]  # every name a module: the package adds nothing
    run, shown = shown_after(root, "-m pytest -q -p no:cacheprovider tests", 60)
    assert not run.passed
    assert shown.get("src/tomli/_parser.py") is True, shown


def test_tests_that_hang_still_show_the_test_file_and_the_code_it_imports(
    tmp_path: Path,
) -> None:
    """A defect that loops forever: the run is killed, no failure names a file, and the
    test command's own file is the way to the code under test."""
    root = write(
        tmp_path,
        {
            "progs/__init__.py": "",
            "progs/count.py": "def count(n):\n    while n:\n        n ^= n - 1\n    return 0\n",
            "tests/test_count.py": "from progs.count import count\n\n\n"
            "def test_count():\n    assert count(127) == 7\n",
        },
    )
    args = "-m pytest -q -p no:cacheprovider tests/test_count.py::test_count"
    run, shown = shown_after(root, args, 3)
    assert run.timed_out and not run.failures
    assert shown == {"tests/test_count.py": False, "progs/count.py": True}, shown
    # a runner script the command names is shown, and never to be changed
    (root / "check.py").write_text("import sys\nsys.exit(1)\n")
    assert shown_after(root, "check.py", 30)[1] == {"check.py": False}


def test_a_file_too_big_to_show_whole_is_shown_in_part_where_the_failure_points(
    tmp_path: Path,
) -> None:
    """A module past ``MAX_FILE_CHARS`` was left out of the task whole, so a bug in it was
    never shown; it is now in the task, shown in part: the failing function."""
    from conductor_lsp.context.rounds import round_task
    from conductor_lsp.context.window import cap_files
    from conductor_lsp.task import MAX_FILE_CHARS

    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(3000))
    code = (
        filler
        + "def wanted(x):\n    return x - 1  # THE_BUG\n\n\n"
        + filler.replace("def f", "def g")
    )
    assert len(code) > MAX_FILE_CHARS
    root = write(
        tmp_path,
        {
            "big.py": code,
            "test_big.py": "from big import wanted\n\n\ndef test_w():\n    assert wanted(1) == 2\n",
        },
    )
    run = asyncio.run(run_tests(f"{sys.executable} -m pytest -q -p no:cacheprovider", root, 60))
    task = round_task("Fix it.", root, run, [])
    assert "big.py" in [f.path for f in task.files]
    shown = next(f for f in cap_files(task).files if f.path == "big.py")
    assert shown.partial and len(shown.text) <= MAX_FILE_CHARS + 200
    assert "THE_BUG" in shown.text and "wanted (" in shown.why
