"""Read the conductor's text into a ``Plan``: RL Conductor lists or JSON.

Model output is untrusted: it is read with ``ast.literal_eval`` on bounded
slices (never ``eval``), and every failure becomes a ``PlanError``.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Sequence

from ..config.schema import DEFAULT_MAX_STEPS
from ..errors import PlanError
from ..plan import (
    ROLES,
    Access,
    ConductorCall,
    Plan,
    Role,
    Step,
    infer_role,
    validate_plan,
)
from ..protocols import WorkerInfo

MAX_INPUT_CHARS = 200_000
_THINK_END = re.compile(r"</think>", re.I)
#: A JSON plan starts with one of these keys: only such braces are decoded (each decode
#: reads to the end of the text, so trying every brace would be quadratic).
_JSON_START = re.compile(r'\{\s*"(?:model_id|subtasks|access_list|roles|steps)"')
_MAX_ID_DIGITS = 6
_LIST_NAMES = ("model_id", "subtasks", "access_list", "roles")


def parse_plan(
    text: str,
    workers: Sequence[str],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    source: str = "conductor",
    tools: frozenset[str] = frozenset(),
) -> Plan:
    """Parse conductor output into a validated plan or raise ``PlanError``.

    ``tools`` names workers that run tools (tests) rather than models: they may not
    take the last step, whose answer becomes the edits.
    """
    if not isinstance(text, str):
        raise PlanError("conductor output is not text")
    if len(text) > MAX_INPUT_CHARS:
        raise PlanError(f"conductor output is too long ({len(text)} characters)")
    body = _strip_thinking(text)
    lists = _find_lists(body)
    if lists is not None:
        steps = _steps_from_lists(lists, workers)
    else:
        obj = _find_json(body)
        if obj is None:
            raise PlanError(
                "no plan found: expected `model_id = [...]`, `subtasks = [...]`, "
                "`access_list = [...]` or a JSON object"
            )
        steps = _steps_from_json(obj, workers)
    validate_plan(steps, list(workers), max_steps, tools)
    return Plan(steps=tuple(steps), source=source, raw=text)


def _strip_thinking(text: str) -> str:
    """What follows the last ``</think>``: the reasoning before it may quote plans.

    One linear scan of the original text (offsets from ``text.lower()`` are wrong where
    lowering changes a string's length, as for "İ")."""
    last = None
    for last in _THINK_END.finditer(text):  # noqa: B007 - the last match is what we want
        pass
    return text[last.end() :] if last is not None else text


def _literal_at(text: str, start: int) -> tuple[object, int]:
    """Read one bracketed Python literal beginning at ``text[start] == '['``."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "[":
            depth += 1
            if depth > 8:
                raise PlanError("plan lists are nested too deeply")
        elif c == "]":
            depth -= 1
            if depth == 0:
                chunk = text[start : i + 1]
                try:
                    return ast.literal_eval(chunk), i + 1
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
                    raise PlanError(f"cannot read list literal {chunk[:80]!r}: {e}") from None
        i += 1
    raise PlanError(f"unterminated list starting {text[start : start + 60]!r}")


def _find_lists(text: str) -> dict[str, object] | None:
    """Find the last complete set of the named lists (few-shot echoes come first)."""
    found: dict[str, object] = {}
    for name in _LIST_NAMES:
        pattern = re.compile(rf"\b{name}\s*[:=]\s*\[")
        matches = list(pattern.finditer(text))
        if not matches:
            continue
        m = matches[-1]
        value, end = _literal_at(text, m.end() - 1)
        follow = text[end : end + 40].lstrip(" \t")
        if follow[:1] in ("*", "+", "[", "(", ".", "-", "/", "%"):
            raise PlanError(f"{name} is an expression, not a plain list literal: {follow[:20]!r}")
        found[name] = value
    if not found:
        return None
    missing = [n for n in _LIST_NAMES[:3] if n not in found]
    if missing:
        raise PlanError(f"plan is missing the list(s): {', '.join(missing)}")
    return found


def _find_json(text: str) -> dict[str, object] | None:
    decoder = json.JSONDecoder()
    candidates = [m.start() for m in _JSON_START.finditer(text)][:20]
    for pos in candidates:
        try:
            obj, _ = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(obj, dict) and ("steps" in obj or "model_id" in obj):
            return obj
    return None


def _worker_name(value: object, workers: Sequence[str], where: str) -> str:
    if isinstance(value, bool):
        raise PlanError(f"{where}: worker id must be an integer, got {value!r}")
    if isinstance(value, int):
        if 0 <= value < len(workers):
            return workers[value]
        raise PlanError(f"{where}: unknown worker id {value} (known ids are 0..{len(workers) - 1})")
    if isinstance(value, str):
        if value in workers:
            return value
        digits = value.strip()
        # isdigit() is true for "²" and other Unicode digits, which int() refuses; and a
        # long digit string would only be an unknown id (or past int()'s digit limit).
        if digits.isascii() and digits.isdigit() and len(digits) <= _MAX_ID_DIGITS:
            return _worker_name(int(digits), workers, where)
        raise PlanError(f"{where}: unknown worker {value[:40]!r}")
    raise PlanError(f"{where}: worker id must be an integer, got {type(value).__name__}")


def _access(value: object, where: str) -> Access:
    if isinstance(value, str):
        v = value.strip().lower()
        if v == "all":
            return "all"
        if v in ("", "none", "[]"):
            return ()
        raise PlanError(f"{where}: access must be 'all' or a list of step indices, got {value!r}")
    if isinstance(value, list | tuple):
        out: dict[int, None] = {}  # ordered, and a linear duplicate check
        for j in value:
            if isinstance(j, bool) or not isinstance(j, int):
                raise PlanError(f"{where}: access entries must be step indices, got {j!r}")
            out.setdefault(j, None)
        return tuple(out)
    raise PlanError(f"{where}: access must be 'all' or a list, got {type(value).__name__}")


def _role(value: object, subtask: str, where: str) -> Role:
    if value is None:
        return infer_role(subtask)
    if isinstance(value, str) and value.strip().lower() in ROLES:
        return value.strip().lower()  # type: ignore[return-value]
    raise PlanError(f"{where}: unknown role {value!r} (use one of {', '.join(ROLES)})")


_WORD = re.compile(r"[^\W\d_][^\W_]*(?:'[^\W_]+)*")  # letters in any script
_STUTTER = re.compile(r"(.{1,8}?)\1{9,}", re.S)
_READ_CHARS = 4000


def unreadable(subtask: str) -> str | None:
    """Why a subtask is no instruction a worker could follow, or None when it reads as one.

    Small conductors, and conductors drifting under training, fill the subtask strings
    with runs like ``]()()()``, ``1.1.1.1...`` or ``5 lines, 5 lines, ...``: a worker
    handed one is lost, and the fix loop would pay for its call. Lenient on purpose:
    terse or code-laden instructions pass."""
    text = subtask[:_READ_CHARS]
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return "it has no words"
    tokens = text.split()
    if sum(any(c.isalpha() for c in t) for t in tokens) < 0.4 * len(tokens):
        return "it is mostly not words"
    trigrams: dict[tuple[str, ...], int] = {}
    for gram in zip(words, words[1:], words[2:], strict=False):
        trigrams[gram] = trigrams.get(gram, 0) + 1
        if trigrams[gram] > 3:
            return f"it repeats {' '.join(gram)!r}"
    m = _STUTTER.search(text)
    if m:
        return f"it repeats {m.group(1)!r}"
    return None


def _subtask(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise PlanError(f"{where}: subtask must be text, got {type(value).__name__}")
    if not value.strip():
        raise PlanError(f"{where}: subtask is empty")
    why = unreadable(value)
    if why is not None:
        raise PlanError(f"{where}: subtask is not an instruction ({why}): {value.strip()[:60]!r}")
    return value.strip()


def _steps_from_lists(lists: dict[str, object], workers: Sequence[str]) -> list[Step]:
    ids, subs, acc = lists["model_id"], lists["subtasks"], lists["access_list"]
    roles = lists.get("roles")
    for name, value in (("model_id", ids), ("subtasks", subs), ("access_list", acc)):
        if not isinstance(value, list):
            raise PlanError(f"{name} must be a list, got {type(value).__name__}")
    assert isinstance(ids, list) and isinstance(subs, list) and isinstance(acc, list)
    if not (len(ids) == len(subs) == len(acc)):
        raise PlanError(
            f"lists have unequal lengths: model_id={len(ids)}, subtasks={len(subs)}, "
            f"access_list={len(acc)}"
        )
    if roles is not None and (not isinstance(roles, list) or len(roles) != len(ids)):
        raise PlanError("roles must be a list as long as model_id")
    steps = []
    for i, (w, s, a) in enumerate(zip(ids, subs, acc, strict=True)):
        where = f"step {i}"
        sub = _subtask(s, where)
        role = _role(roles[i] if isinstance(roles, list) else None, sub, where)
        steps.append(Step(_worker_name(w, workers, where), sub, _access(a, where), role))
    return steps


def _steps_from_json(obj: dict[str, object], workers: Sequence[str]) -> list[Step]:
    if "model_id" in obj:
        return _steps_from_lists(
            {k: obj[k] for k in _LIST_NAMES if k in obj} | _require(obj), workers
        )
    raw_steps = obj.get("steps")
    if not isinstance(raw_steps, list):
        raise PlanError("JSON plan: 'steps' must be a list")
    steps = []
    for i, item in enumerate(raw_steps):
        where = f"step {i}"
        if not isinstance(item, dict):
            raise PlanError(f"{where}: each step must be an object")
        worker = item.get("worker", item.get("model_id"))
        sub = _subtask(item.get("subtask"), where)
        steps.append(
            Step(
                _worker_name(worker, workers, where),
                sub,
                _access(item.get("access", "all"), where),
                _role(item.get("role"), sub, where),
            )
        )
    return steps


def _require(obj: dict[str, object]) -> dict[str, object]:
    missing = [n for n in _LIST_NAMES[:3] if n not in obj]
    if missing:
        raise PlanError(f"JSON plan is missing: {', '.join(missing)}")
    return {}


def parse_for_workers(
    text: str, workers: Sequence[WorkerInfo], *, max_steps: int, source: str
) -> Plan:
    """``parse_plan`` for the worker list a conductor was shown."""
    tools = frozenset(w.name for w in workers if w.is_tool)
    return parse_plan(
        text, [w.name for w in workers], max_steps=max_steps, source=source, tools=tools
    )


def plan_from_output(
    text: str,
    workers: Sequence[WorkerInfo],
    *,
    max_steps: int,
    source: str,
    call: ConductorCall,
) -> Plan:
    """The plan a model wrote, with what writing it cost; an unusable text becomes a plan
    with no steps and the reason, so the caller falls back while keeping the evidence."""
    try:
        plan = parse_for_workers(text, workers, max_steps=max_steps, source=source)
    except PlanError as e:
        return Plan(steps=(), source=source, raw=text, call=call, error=str(e))
    return dataclasses.replace(plan, call=call)
