"""The three-list plan grammar (EBNF) for constrained decoding.

Written out per plan length so the lists always have equal length, with worker
ids and access indices limited to what exists; the parser still validates.
"""

from __future__ import annotations


def _alt(options: list[str]) -> str:
    return " | ".join(f'"{o}"' for o in options)


def plan_grammar(n_workers: int, max_steps: int) -> str:
    ids = _alt([str(i) for i in range(n_workers)])
    rules = [
        'sub ::= "\\"" [^"\\\\\\n]{8,160} "\\""',
        f"id ::= {ids}",
        'acc0 ::= "\\"all\\"" | "[]"',
    ]
    for k in range(1, max_steps):
        idx = _alt([str(j) for j in range(k)])
        rules.append(f'acc{k} ::= "\\"all\\"" | "[]" | "[" ({idx}) (", " ({idx}))* "]"')
    plans = []
    for n in range(1, max_steps + 1):
        id_list = ' ", " '.join(["id"] * n)
        sub_list = ' ", " '.join(["sub"] * n)
        acc_list = ' ", " '.join(f"acc{k}" for k in range(n))
        rules.append(
            f'plan{n} ::= "model_id = [" {id_list} "]\\nsubtasks = [" {sub_list} '
            f'"]\\naccess_list = [" {acc_list} "]"'
        )
        plans.append(f"plan{n}")
    return "root ::= " + " | ".join(plans) + "\n" + "\n".join(rules) + "\n"
