"""A bounded fuzz of the surfaces that read what anyone may write: a workspace's
configuration values, the MCP door's paths and lines, a local server's model list
(``init``), a mined commit's tree. Each ends
in its own clear error or a sane value, never another exception (the campaign of issue
50, kept small enough for CI)."""

from __future__ import annotations

import asyncio
import http.server
import io
import json
import re
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conductor_lsp import ConductorError, load_config

KEYS = [
    ("budget", "max_cost"), ("budget", "max_calls"), ("budget", "max_seconds"),
    ("test", "timeout"), ("test", "jobs"), ("test", "command"), ("fix", "prefer"),
    ("fix", "give_up_below"), ("fix", "repo_map_chars"), ("conductor", "max_steps"),
    ("conductor", "temperature"), ("learn", "episodes"), ("trace", "dir"),
    ("edits", "fuzzy_threshold"), ("edits", "deny"), ("search", "samples"),
]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(key=st.sampled_from(KEYS), value=VALUES)
def test_any_configuration_value_loads_or_is_named(key: tuple[str, str], value: object) -> None:
    section, name = key
    with tempfile.TemporaryDirectory() as tmp:
        try:
            cfg = load_config(Path(tmp), overrides={section: {name: value}}, env={})
        except ConductorError as e:
            assert f"{section}.{name}" in str(e) or "must be" in str(e), e
            return
        got = getattr(getattr(cfg, section), name)
        if isinstance(got, float):
            assert got == got and abs(got) != float("inf")  # no nan or infinity got in


@FUZZ
@given(path=st.text(max_size=300))
def test_any_mcp_path_is_a_folder_inside_or_a_clear_error(path: str) -> None:
    pytest.importorskip("mcp")
    from conductor_lsp.mcp_server.tools import Door

    with tempfile.TemporaryDirectory() as tmp:
        door = Door(Path(tmp))
        try:
            folder = door.inside(path)
        except ConductorError:
            return
        assert folder == door.root or door.root in folder.parents
        assert ".git" not in folder.relative_to(door.root).parts


@FUZZ
@given(message=VALUES)
def test_the_mcp_guard_reads_any_line(message: object) -> None:
    pytest.importorskip("mcp")
    from conductor_lsp.mcp_server.transport import unanswered_id

    key = unanswered_id(json.dumps(message))
    assert key is None or isinstance(key, str | int)
    if isinstance(message, dict) and isinstance(message.get("params", {}), dict):
        assert key is None


class _Models(http.server.BaseHTTPRequestHandler):
    """A loopback server whose ``/v1/models`` body is whatever the fuzz sets."""

    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def models_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


MODEL_LISTS = st.one_of(
    VALUES,
    st.fixed_dictionaries({"data": st.lists(st.fixed_dictionaries({"id": VALUES}), max_size=40)}),
    st.fixed_dictionaries(
        {"data": st.lists(st.fixed_dictionaries({"id": st.text(max_size=300)}), max_size=40)}
    ),
)


@FUZZ
@given(body=MODEL_LISTS | st.binary(max_size=200).map(lambda b: {"raw": b}))
def test_init_reads_any_model_list(models_server: str, body: object) -> None:
    """Whatever a local server answers, ``init`` finds a bounded list of printable ids,
    named so a TOML table can hold them, or nothing; never an exception."""
    from conductor_lsp.configure.discover import MAX_ID, MAX_MODELS, served

    raw = body["raw"] if isinstance(body, dict) and "raw" in body else None
    _Models.body = raw if isinstance(raw, bytes) else json.dumps(body).encode()
    found = asyncio.run(served({"fuzz": models_server}, timeout=10))
    assert len(found) <= MAX_MODELS
    for f in found:
        assert f.model.isprintable() and 0 < len(f.model) <= MAX_ID
        f.model.encode("utf-8")  # writable as it will be written
        assert re.fullmatch(r"[a-z0-9_-]+", f.name), f.name


_MEMBER_NAMES = st.sampled_from(
    ["a.py", "pkg/b.py", "pkg", "up", "up/escaped.py", "../out.py", "/abs.py",
     "pkg/../../out2.py", "d", "d/x.py", "a.py/inner.py", ".git/config", "x" * 300]
)  # fmt: skip
_TARGETS = st.sampled_from(["..", "../..", "/", "/etc/passwd", "a.py", "pkg", "d/x.py"])
_KINDS = st.sampled_from(
    [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE]
)
_MEMBERS = st.lists(st.tuples(_MEMBER_NAMES, _KINDS, _TARGETS), max_size=8)


@FUZZ
@given(members=_MEMBERS)
def test_mining_extracts_any_trees_files_inside_its_box(
    members: list[tuple[str, bytes, str]],
) -> None:
    """A commit's archive with any members a history may hold (links out, absolute and
    climbing paths, devices, a file through a symlink named before it, names too long):
    the files land in the box or are left out by name, never outside it, never a
    traceback."""
    from conductor_lsp.mine.sandbox import extract_tree

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        for name, kind, target in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            body = b"print('hi')\n" if kind == tarfile.REGTYPE else b""
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    with tempfile.TemporaryDirectory() as tmp:
        box, beside = Path(tmp) / "work" / "box", Path(tmp) / "work"
        box.mkdir(parents=True)
        left_out = extract_tree(data.getvalue(), box)
        assert isinstance(left_out, list)
        assert sorted(p.name for p in beside.iterdir()) == ["box"]  # nothing beside it
        assert not (Path(tmp) / "out.py").exists() and not (Path(tmp) / "out2.py").exists()
