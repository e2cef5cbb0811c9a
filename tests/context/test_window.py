"""A worker whose window is smaller than the repository's files (``[workers.X] context``):
real git, real pytest, the stand-in worker. The module under repair is ~29,000
characters; the worker's window is 2,048 tokens. It is shown the module in part (the
failing function whole, the gaps marked), asked for SEARCH/REPLACE blocks, and its fix
turns the job green; an answer that rewrites the file from the part it saw is refused
and the file is untouched."""

from __future__ import annotations

import json

import git
import pytest
from helpers import cli, config, sr, worker
from standin import Seen, StandIn

from conductor_lsp.context.window import CHARS_PER_TOKEN, excerpt, fit_task
from conductor_lsp.task import FileContext, Task
from conductor_lsp.workers.ratios import ratios_file

CONTEXT, MAX_TOKENS = 2048, 256
FUNCS = 400


def module(bug: bool) -> str:
    """One class of many methods: a whole-file answer keeps its only top-level name."""
    body = ["import math\n\nSCALE = 3\n\n\nclass Ops:\n"]
    for i in range(FUNCS):
        op = "-" if bug and i == 321 else "+"
        body.append(
            f'\n    def f{i}(self, x):\n        """Number {i}."""\n        return x {op} {i}\n'
        )
    return "".join(body)


TESTS = (
    "from big import Ops\n\n\ndef test_f321():\n    assert Ops().f321(1) == 322\n\n\n"
    "def test_f7():\n    assert Ops().f7(1) == 8\n"
)


@pytest.fixture
def project(tmp_path, standin: StandIn):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "big.py").write_text(module(bug=True))
    (root / "test_big.py").write_text(TESTS)
    (root / ".gitignore").write_text(".conductor/\n")
    repo = git.Repo.init(root)
    repo.index.add(["big.py", "test_big.py", ".gitignore"])
    repo.index.commit("init")
    coder = worker("coder", standin.url) + f"context = {CONTEXT}\nmax_tokens = {MAX_TOKENS}\n"
    (root / "conductor.toml").write_text(config('backend = "static"\nmax_steps = 1', coder))
    return root


def request_chars(seen: Seen) -> int:
    return sum(len(m.get("content") or "") for m in seen.body.get("messages", []))


def test_a_file_bigger_than_the_window_is_shown_in_part_and_fixed(project, standin) -> None:
    standin.responder = lambda seen: sr(
        "big.py", "        return x - 321\n", "        return x + 321\n"
    )
    done = cli("fix", str(project), "--max-iterations", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "big.py").read_text() == module(bug=False)
    prompt = standin.seen[0].prompt()
    assert request_chars(standin.seen[0]) <= (CONTEXT - MAX_TOKENS) * CHARS_PER_TOKEN
    assert len(module(True)) > 5 * (CONTEXT - MAX_TOKENS) * CHARS_PER_TOKEN  # it had to be cut
    assert "def f321(self, x):" in prompt and "return x - 321" in prompt  # the failing one
    assert "def f200(self, x):" not in prompt and "not shown: f" in prompt  # gaps named
    assert "shown in part" in prompt and "SEARCH/REPLACE" in prompt  # blocks, never whole files


def test_a_rewrite_from_the_part_it_saw_is_refused(project, standin) -> None:
    def rewrite(seen: Seen) -> str:  # the whole file, as far as the worker saw it
        content = "\n".join(m.get("content") or "" for m in seen.body["messages"])
        part = content.split("## File `big.py`", 1)[1].split("```\n", 1)[1].split("\n```")[0]
        return "big.py\n```python\n" + part.replace("x - 321", "x + 321") + "\n```\n"

    standin.responder = rewrite
    done = cli("fix", str(project), "--max-iterations", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "big.py was shown in part, and the change drops" in done.stdout
    assert (project / "big.py").read_text() == module(bug=True)


def test_without_a_window_the_task_is_sent_whole() -> None:
    task = Task("Fix f321", (FileContext("big.py", module(True)),))
    assert fit_task(task, 0) is task and fit_task(task, 10**6) is task
    fitted = fit_task(task, 4000)
    assert fitted.files[0].partial and len(fitted.render()) < len(task.render())


def test_an_excerpt_keeps_the_lines_the_failures_point_at() -> None:
    text = module(True)
    line = text.splitlines().index("        return x - 321") + 1
    part = excerpt(text, [line], [], 600)
    assert part is not None and "        return x - 321" in part and "def f321(self, x):" in part
    assert "import math" in part and "class Ops:" in part and "def f5(self, x):" not in part
    own = set(text.splitlines())
    assert all(line in own or line.startswith("# ... lines") for line in part.splitlines())


def test_an_endpoints_own_token_counts_are_what_the_next_request_is_fitted_by(
    project, standin
) -> None:
    """The stand-in reports tokens as a tokenizer of 4 characters a token and a token a
    digit would: the first job is fitted by the fixed guess (3.0), the next by what the
    first answer reported (kept in the user's state, per endpoint), and each request is
    within the window by that tokenizer's count."""

    def counted(text: str) -> int:
        digits = sum(c.isdigit() for c in text)
        return digits + (len(text) - digits) // 4

    standin.counter = counted
    standin.responder = lambda seen: "I cannot tell where the bug is."
    for _ in range(2):
        done = cli("fix", str(project), "--max-iterations", "1")
        assert "Traceback" not in done.stderr, done.stderr
    used = [
        json.loads(line)["chars_per_token"]
        for path in sorted((project / ".conductor").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") == "request"
    ]
    assert used[0] == CHARS_PER_TOKEN and 3.6 <= used[-1] <= 4.0, used
    room = CONTEXT - MAX_TOKENS
    assert all(counted(seen.messages_text()) <= room for seen in standin.seen[:2])
    learned = json.loads(ratios_file().read_text(encoding="utf-8"))
    assert [k for k in learned if standin.url in k]


#: A method whose docstring is longer than its code, failing at its last line on a value
#: its first line made (sortedcontainers' ``SortedDict.__init__``).
DOCUMENTED = (
    "class Sorted:\n"
    "    def __init__(self, *args):\n"
    '        """Make one.\n\n'
    + "".join(f"        Prose about the sorted mapping, paragraph {k}.\n" for k in range(40))
    + '        """\n'
    "        if args and (args[0] is None and callable(args[0])):\n"
    "            self._key = args[0]\n"
    + "".join(f"        self.cached_{k} = self._list.method_{k}\n" for k in range(24))
    + "        self._update(*args)\n\n"
    "    @property\n    def key(self):\n        return self._key\n\n"
    + "".join(f"    def other_{k}(self):\n        return {k}\n\n" for k in range(20))
)


def test_a_traceback_definition_too_big_to_show_is_shown_without_its_docstring() -> None:
    """The lines a traceback names are the last of a long method: its code, less its
    docstring, fits where the whole does not, and holds the line that made the value;
    where even that does not fit, the lines before the failing one are shown, none past
    the method's end."""
    lines = DOCUMENTED.splitlines()
    failing = lines.index("        self._update(*args)") + 1
    wrong = "        if args and (args[0] is None and callable(args[0])):"
    code = sum(len(line) + 1 for line in lines if "Prose" not in line and "other_" not in line)
    part = excerpt(DOCUMENTED, [failing], [], code)
    assert part is not None and wrong in part and "Prose about" not in part
    assert "    def __init__(self, *args):" in part
    before = sum(len(line) + 1 for line in lines[failing - 25 : failing]) + 300
    small = excerpt(DOCUMENTED, [failing], [], before)
    assert small is not None and "        self._update(*args)" in small
    assert "def key(self):" not in small and "self.cached_3 " in small
