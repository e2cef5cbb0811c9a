"""The repository map: outlines read with ast, nearest the failing tests first, within a
budget, kept current by modification time, never reading denied or skipped files."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from standin import Seen, StandIn

from conductor_lsp import FixLoop, Session, load_config
from conductor_lsp.context.files import named_files
from conductor_lsp.context.repo_map import RepoMap, outline, scan
from conductor_lsp.edits.paths import DEFAULT_DENY, denied_by
from conductor_lsp.plan import Plan, Step
from conductor_lsp.runtime import LoopNote
from conductor_lsp.runtime.requests import build_request
from conductor_lsp.runtime.results import StepResult
from conductor_lsp.task import FileContext, Task


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


REPO = {
    "tests/test_orders.py": "from shop.orders import total\n\ndef test_total():\n"
    "    assert total([1, 2], region='EU') == 3.6\n",
    "shop/__init__.py": "",
    "shop/orders.py": "from shop.tax import rate\n\ndef total(items, region='US'):\n"
    "    return sum(items) * (1 + rate(region))\n",
    "shop/tax.py": "from shop.money import cents\n\nRATES = {'EU': 0.2}\n\n"
    "def rate(region: str) -> float:\n    return RATES.get(region, 0.0)\n",
    "shop/money.py": "def cents(x: float) -> int:\n    return round(x * 100)\n",
    "shop/admin/report.py": "class Report:\n    def render(self, width: int = 80) -> str:\n"
    "        return ''\n",
    "secrets/keys.py": "def key():\n    return 'abc'\n",
    ".venv/lib/site.py": "def vendored():\n    pass\n",
    "broken.py": "def (:\n",
}


def test_outline_lists_classes_and_functions_with_signatures() -> None:
    o = outline(REPO["shop/admin/report.py"] + "\nasync def fetch(url, *, timeout=3): ...\n", "m")
    assert o.lines == [
        "  class Report:",
        "    def render(self, width: int=80) -> str",
        "  async def fetch(url, *, timeout=3)",
    ]
    assert outline("def (:\n", "m").lines == []  # a file that does not parse: nothing


def test_the_map_ranks_by_import_distance_from_the_failing_test(tmp_path: Path) -> None:
    write(tmp_path, REPO)
    repo = RepoMap(tmp_path, deny=["secrets"])
    assert repo.refresh() == 7  # the venv is skipped, the denied folder never read
    text = repo.render(["tests/test_orders.py", "shop/orders.py"], max_chars=10_000)
    lines = text.splitlines()
    assert lines[0].startswith("(an outline of 3 of the repository's 3 other Python files")
    # tax.py is one import away from what the test runs, money.py two, report.py none.
    order = [line.split(" (import ")[0] for line in lines if " (import " in line]
    assert order == ["shop/tax.py", "shop/money.py", "shop/admin/report.py"]
    assert "  def rate(region: str) -> float" in lines
    assert "key" not in text and "vendored" not in text
    assert "tests/test_orders.py" not in order  # shown in full already
    # Within a small budget only the nearest fit.
    small = repo.render(["tests/test_orders.py", "shop/orders.py"], max_chars=120)
    assert "shop/tax.py" in small and "report.py" not in small


def test_refresh_parses_only_what_changed(tmp_path: Path) -> None:
    write(tmp_path, REPO)
    repo = RepoMap(tmp_path)
    repo.refresh()
    assert repo.refresh() == 0
    money = tmp_path / "shop/money.py"
    money.write_text("def cents(x: float, digits: int = 2) -> int:\n    return 0\n")
    st = money.stat()
    os.utime(money, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert repo.refresh() == 1
    assert "  def cents(x: float, digits: int=2) -> int" in repo.detail("shop/money.py").lines
    (tmp_path / "shop/admin/report.py").unlink()
    repo.refresh()
    assert "shop/admin/report.py" not in repo.files


def test_only_analysis_steps_of_a_fix_job_are_sent_the_map() -> None:
    task = Task("fix it", (FileContext("a.py", "x = 1\n"),), repo_map="shop/tax.py\n  def rate()")
    plan = Plan(
        steps=(
            Step("w", "Find the cause and name the lines to change.", (), "analysis"),
            Step("w", "Make the change.", (0,), "generation"),
        )
    )
    first = build_request(task, plan, 0, [])
    assert "## Repository map\nshop/tax.py" in first.prompt_text()
    done = StepResult(0, plan.steps[0], "The cause is in tax.py.", answered=True)
    assert "Repository map" not in build_request(task, plan, 1, [done]).prompt_text()


def test_the_scan_reads_imports_and_names_as_the_parse_does() -> None:
    """Ranking uses the regex scan of every file; it must agree with ast on what a file
    imports (absolute imports only) and define at least what the parse lists."""
    source = (
        "import os.path as p, json\n"
        "from shop.tax import (\n    rate,\n    RATES as R,  # the table\n)\n"
        "from . import sibling\n"
        "from .money import cents\n"
        "class Report(Base):\n    def render(self): ...\n\n"
        "    async def fetch(self): ...\n"
        "def top():\n    import re  # late\n"
    )
    quick, full = scan(source, "m"), outline(source, "m")
    assert quick.imports == full.imports == {
        "os.path", "json", "re", "shop.tax", "shop.tax.rate", "shop.tax.RATES"
    }  # fmt: skip
    assert quick.defines == full.defines == {"Report", "render", "fetch", "top"}
    assert not quick.parsed and not quick.lines


def test_the_walk_denies_what_denied_by_denies(tmp_path: Path) -> None:
    names = [
        "ok.py", "secrets.py", "Credentials_store.py", "pkg/.env.py", "pkg/credentials/x.py",
        "SECRETS.PY", "deep/a/id_rsa_helper.py", "pkg/mod.py", "tools/my.key/x.py",
    ]  # fmt: skip
    write(tmp_path, {n: "def f(): ...\n" for n in names})
    deny = [*DEFAULT_DENY, "deep/*/id_*"]
    repo = RepoMap(tmp_path, deny=deny)
    repo.refresh()
    expected = {n for n in names if not denied_by(n, deny) and not n.startswith("pkg/.")}
    assert set(repo.files) == expected
    assert expected == {"ok.py", "pkg/mod.py"}


def test_a_render_parses_only_what_it_shows(tmp_path: Path) -> None:
    files = {f"pkg/m{n:02}.py": f"def f{n}(a: int) -> int:\n    return a\n" for n in range(60)}
    write(tmp_path, {**REPO, **files})
    repo = RepoMap(tmp_path)
    repo.refresh()
    text = repo.render(["tests/test_orders.py", "shop/orders.py"], max_chars=300)
    parsed = {rel for rel, o in repo.files.items() if o.parsed}
    assert "shop/tax.py" in text and "shop/tax.py" in parsed
    # The seeds (for the names they use) and what fit, plus what was tried: not all 60.
    assert len(parsed) < 60


PLUGIN_BUG = "def render(rows):\n    return ';'.join(rows)\n"
PLUGIN_FIX = "def render(rows):\n    return ','.join(rows)\n"


def test_a_file_an_answer_names_is_shown_in_the_next_round(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cause is in a module loaded by name (no import reaches it, so no round shows
    it): the first answer can only name it; the next round shows it, and it is fixed."""
    root = tmp_path / "ws"
    write(
        root,
        {
            "app.py": "import importlib\n\n\ndef export(rows, kind):\n"
            "    return importlib.import_module(f'plugins.{kind}').render(rows)\n",
            "plugins/__init__.py": "",
            "plugins/csvfmt.py": PLUGIN_BUG,
            "conftest.py": "",
            "test_app.py": "from app import export\n\n\ndef test_csv():\n"
            "    assert export(['a', 'b'], 'csvfmt') == 'a,b'\n",
        },
    )
    (root / "conductor.toml").write_text(
        '[conductor]\nbackend = "static"\n'
        f'[workers.strong]\nprovider = "openai-compatible"\nmodel = "strong"\n'
        f'base_url = "{standin.url}/v1"\nmax_retries = 0\n'
        f'[test]\ncommand = "{sys.executable} -m pytest -q -p no:cacheprovider"\ntimeout = 60\n'
        "[budget]\nmax_iterations = 2\n"
    )

    def respond(seen: Seen) -> str:
        if "';'.join(rows)" in seen.prompt():  # the plugin's text was shown: fix it
            return f"plugins/csvfmt.py\n```python\n{PLUGIN_FIX}```\n"
        return "The separator is wrong in plugins/csvfmt.py (render joins with ';')."

    standin.responder = respond
    notes: list[str] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def on_event(e: object) -> None:
        if isinstance(e, LoopNote):
            notes.append(e.message)

    async def go() -> object:
        session = Session(load_config(root))
        try:
            return await FixLoop(session, on_event=on_event).run()
        finally:
            await session.aclose()

    report = asyncio.run(go())
    assert getattr(report, "outcome", None) == "green"
    assert (root / "plugins/csvfmt.py").read_text() == PLUGIN_FIX
    assert any("also shows plugins/csvfmt.py" in n for n in notes), notes
    first, second = standin.seen[0].prompt(), standin.seen[-1].prompt()
    assert "';'.join(rows)" not in first and "';'.join(rows)" in second


def test_named_files_resolve_paths_and_unique_bare_names(tmp_path: Path) -> None:
    write(tmp_path, {**REPO, "other/money.py": "x = 1\n"})
    texts = [
        "Look at shop/tax.py and tax.py, then report.py; money.py is ambiguous; "
        "secrets/keys.py is denied; nothere.py does not exist; ../up.py climbs out.",
        "Also shop/orders.py and tests/test_orders.py.",
    ]
    known = [p for p in REPO if p.endswith(".py")] + ["other/money.py"]
    found = named_files(tmp_path, texts, {"shop/orders.py"}, ["secrets"], known)
    # In order of mention, at most three, the shown file and the denied one left out.
    assert found == ["shop/tax.py", "shop/admin/report.py", "tests/test_orders.py"]


TWO_AWAY = {
    "shop.py": "from pricing import price\n\n\ndef checkout(cart, region):\n"
    "    return sum(price(item, region) for item in cart)\n",
    "pricing.py": "from rates import rate_for\n\n\ndef price(item, region):\n"
    "    return item * (1 + rate_for(region))\n",
    "rates.py": "RATES = {'EU': 0.2}\n\n\n"
    "def rate_for(region: str, reduced: bool = False) -> float:\n"
    "    return RATES.get(region, 0.0) / (2 if reduced else 1)\n",
    "zoo.py": "def unrelated_helper(x):\n    return x\n",
    "catalog.py": "def checkout_banner() -> str:\n    return 'hi'\n",
}


def test_what_a_file_reaches_comes_first_then_what_defines_its_names(tmp_path: Path) -> None:
    write(tmp_path, {**TWO_AWAY, "z_uses.py": "from shop import checkout\n"})
    repo = RepoMap(tmp_path)
    repo.refresh()
    text = repo.render(["shop.py"], max_chars=10_000, about="shop.py")
    order = [line.split(" (import ")[0] for line in text.splitlines() if " (import " in line]
    # pricing one import away, rates two; the importer z_uses.py defines nothing.
    assert order[:2] == ["pricing.py", "rates.py"]
    assert set(order[2:]) == {"zoo.py", "catalog.py"}
    assert "first the modules shop.py import, directly or through others" in text


def test_a_run_job_on_a_file_is_shown_a_module_two_imports_away(tmp_path: Path) -> None:
    """``run --file shop.py``: the worker's first request holds rates.py's outline, which
    shop.py reaches only through pricing.py; with the map off it does not."""
    from helpers import cli, config, worker

    write(tmp_path, TWO_AWAY)
    standin = StandIn().start()
    try:
        coder = worker("coder", standin.url)
        (tmp_path / "conductor.toml").write_text(config('backend = "static"', coder, tests=False))
        ask = "Add checkout_reduced(cart, region) that charges the reduced rate"
        out = cli("run", "--file", "shop.py", ask, cwd=tmp_path, timeout=120)
        assert out.returncode == 0, out.stderr
        first = standin.seen[0].body["messages"][-1]["content"]
        assert "## Repository map\n(an outline of" in first
        outline = (
            "rates.py (import rates)\n  def rate_for(region: str, reduced: bool=False) -> float"
        )
        assert outline in first
        assert first.index("pricing.py") < first.index("rates.py")
        off = config('backend = "static"', coder, tests=False, extra="[fix]\nrepo_map_chars = 0\n")
        (tmp_path / "conductor.toml").write_text(off)
        cli("run", "--file", "shop.py", ask, cwd=tmp_path, timeout=120)
        assert "rate_for" not in standin.seen[1].body["messages"][-1]["content"]
    finally:
        standin.stop()
