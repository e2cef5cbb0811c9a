"""The plan format for constrained decoding: a three-list grammar (EBNF: xgrammar in
process, llama.cpp's ``grammar`` field) and a JSON schema (servers' structured output).

Written out per plan length so the lists always have equal length, with worker
ids and access indices limited to what exists; the parser still validates.

Access lists hold at most as many entries as there are earlier steps, and
subtasks are printable ASCII without quotes or backslashes, so every token
covers at least one character and ``worst_case_tokens`` bounds the output:
decoding with that many new tokens always finishes the grammar.
"""

from __future__ import annotations

from typing import Any

SUBTASK_MAX_CHARS = 160


def _alt(options: list[str]) -> str:
    return " | ".join(f'"{o}"' for o in options)


def plan_grammar(n_workers: int, max_steps: int, tools: frozenset[int] = frozenset()) -> str:
    """``tools``: ids of tool workers, which may not take the last step."""
    ids = _alt([str(i) for i in range(n_workers)])
    last = _alt([str(i) for i in range(n_workers) if i not in tools]) or ids
    rules = [
        'sub ::= "\\"" [ !#-\\[\\]-~]{8,' + str(SUBTASK_MAX_CHARS) + '} "\\""',
        f"id ::= {ids}",
        f"lastid ::= {last}",
        'acc0 ::= "\\"all\\"" | "[]"',
    ]
    for k in range(1, max_steps):
        idx = _alt([str(j) for j in range(k)])
        rules.append(f'acc{k} ::= "\\"all\\"" | "[]" | "[" ({idx}) (", " ({idx})){{0,{k - 1}}} "]"')
    plans = []
    for n in range(1, max_steps + 1):
        id_list = ' ", " '.join([*["id"] * (n - 1), "lastid"])
        sub_list = ' ", " '.join(["sub"] * n)
        acc_list = ' ", " '.join(f"acc{k}" for k in range(n))
        rules.append(
            f'plan{n} ::= "model_id = [" {id_list} "]\\nsubtasks = [" {sub_list} '
            f'"]\\naccess_list = [" {acc_list} "]"'
        )
        plans.append(f"plan{n}")
    return "root ::= " + " | ".join(plans) + "\n" + "\n".join(rules) + "\n"


def worst_case_tokens(max_steps: int) -> int:
    """An upper bound on the tokens of any string the grammar accepts."""
    per_step = 3 + (SUBTASK_MAX_CHARS + 4) + 3 * max_steps + 4
    return 48 + max_steps * per_step


def _access_schema(k: int) -> dict[str, Any]:
    """What step ``k`` may see: "all", or a list of earlier steps (none for step 0)."""
    # An array schema always names its items: some converters drop maxItems without them.
    items: dict[str, Any] = {"enum": list(range(k))} if k else {"type": "integer"}
    earlier: dict[str, Any] = {"type": "array", "items": items, "maxItems": k}
    if k:
        earlier["uniqueItems"] = True
    return {"anyOf": [{"const": "all"}, earlier]}


def plan_schema(
    n_workers: int, max_steps: int, tools: frozenset[int] = frozenset()
) -> dict[str, Any]:
    """The plan as a JSON schema: one variant per plan length, so the three lists always
    have equal length; ids are real workers, the last one a model, access only backwards.
    Tuples are ``prefixItems`` bounded by ``minItems``/``maxItems``, never ``items: false``:
    llama.cpp's server refuses a schema that is not an object (and prefers ``items``)."""
    ids = list(range(n_workers))
    last = [i for i in ids if i not in tools] or ids
    variants = []
    for n in range(1, max_steps + 1):
        model_ids = [{"enum": ids}] * (n - 1) + [{"enum": last}]
        variants.append(
            {
                "type": "object",
                "properties": {
                    "model_id": {
                        "type": "array",
                        "prefixItems": model_ids,
                        "minItems": n,
                        "maxItems": n,
                    },
                    "subtasks": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 8, "maxLength": SUBTASK_MAX_CHARS},
                        "minItems": n,
                        "maxItems": n,
                    },
                    "access_list": {
                        "type": "array",
                        "prefixItems": [_access_schema(k) for k in range(n)],
                        "minItems": n,
                        "maxItems": n,
                    },
                },
                "required": ["model_id", "subtasks", "access_list"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": variants}


def worst_case_json_tokens(max_steps: int) -> int:
    """A generous token budget for a JSON plan. Servers' JSON grammars allow whitespace
    between items and escapes in strings, so no exact bound exists as for the list
    grammar; this one covers every subtask fully escaped, with wide spacing, at two
    characters a token (BPE tokens of JSON punctuation and text are longer)."""
    per_step = 2 * (SUBTASK_MAX_CHARS + 4) + 4 * max_steps + 3 * 24
    return 96 + max_steps * per_step


def render_lists(ids: list[int], subtasks: list[str], access: list[object]) -> str:
    """A plan in the grammar's own form (what constrained decoding writes), so fine-tuning
    on recorded plans teaches exactly the text the grammar accepts."""

    def sub(text: str) -> str:
        clean = "".join(c if " " <= c <= "~" and c not in '"\\' else " " for c in text)
        clean = " ".join(clean.split())[:SUBTASK_MAX_CHARS]
        return f'"{clean.ljust(8, ".")}"'

    def acc(value: object) -> str:
        return '"all"' if value == "all" else "[" + ", ".join(str(j) for j in value) + "]"  # type: ignore[attr-defined]

    return (
        f"model_id = [{', '.join(str(i) for i in ids)}]\n"
        f"subtasks = [{', '.join(sub(t) for t in subtasks)}]\n"
        f"access_list = [{', '.join(acc(a) for a in access)}]"
    )
