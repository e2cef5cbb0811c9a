"""Strategies compared by ``eval``: ways to get a plan, as configuration layers.

``conductor`` is the configured backend; ``static`` one call (to the
strongest affordable worker, a debugging retry); ``search`` every model worker and two
wordings as candidates the tests choose from, and ``search:workers``,
``search:wording``, ``search:samples`` each source of diversity alone (samples: three
calls to the strongest, two sampled); ``cascade`` the cheaper workers first, then the
floor (``prefer = "cost"``); ``pipeline`` the analysis ->
generation -> review chain; ``static+repair`` static with ``[fix] repair``;
``architect:A>B`` A describes the change, B writes the edits; ``review:A>B`` B
corrects A's red answer in the same round; ``pipeline:A>B`` A analyses, B writes the
change and reviews it (``pipeline``'s chain with its workers named, and no floor
beside it); ``single:NAME``
static pinned to one worker (the plain "one call to that model" script, with the same
retry), and ``single:NAME@cause`` the same asked in search's second wording (find the
cause, name the lines): ``shapes:*`` records both, so every action the policy chooses
among has a verdict on every task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..workers.registry import PROVIDERS

NAMED: dict[str, dict[str, Any]] = {
    "conductor": {},
    "static": {"conductor": {"backend": "static", "worker": ""}},
    "search": {"conductor": {"backend": "search", "worker": ""}},
    # One source of diversity at a time, each beside static's own call:
    "search:workers": {
        "conductor": {"backend": "search", "worker": ""},
        "search": {"workers": True, "wording": False, "samples": 1},
    },
    "search:wording": {
        "conductor": {"backend": "search", "worker": ""},
        "search": {"workers": False, "wording": True, "samples": 1},
    },
    "search:samples": {
        "conductor": {"backend": "search", "worker": ""},
        "search": {"workers": False, "wording": False, "samples": 3},
    },
    "pipeline": {"conductor": {"backend": "pipeline"}},
    # static, with an answer that held no applicable edit repaired by the cheapest worker.
    "static+repair": {"conductor": {"backend": "static", "worker": ""}, "fix": {"repair": True}},
    # The trivial cascade: every cheaper worker first, one at a time, then the floor.
    "cascade": {
        "conductor": {"backend": "search", "worker": ""},
        "search": {"workers": True, "wording": False, "samples": 1},
        "fix": {"prefer": "cost"},
    },
}


#: The shapes of two workers a strategy names (``architect:A>B``, ``review:A>B``,
#: ``pipeline:A>B``).
SHAPED = ("architect", "review", "pipeline")


def parse_strategies(text: str, workers: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``"conductor,static,single:big"`` -> name -> config layer; ``single:*`` is one per
    model worker (``single:NAME@cause``, ``single:*@cause``: in the second wording),
    ``architect:A>B`` A describing and B editing, ``review:A>B`` A writing and B
    correcting a red answer, ``pipeline:A>B`` A analysing and B writing and reviewing,
    ``architect:*``, ``review:*`` and ``pipeline:*`` every ordered pair,
    ``shapes:*`` all of them and the single calls in both wordings. Unknown names and
    workers are ``ConfigError``."""
    out: dict[str, dict[str, Any]] = {}
    models = [n for n, w in workers.items() if _is_model(w)]
    for name in [n.strip() for n in text.split(",") if n.strip()]:
        if name in NAMED:
            out[name] = NAMED[name]
            continue
        kind, _, who = name.partition(":")
        if kind not in ("single", *SHAPED, "shapes") or not who:
            known = ", ".join([*NAMED, "single:NAME", "single:*", "single:NAME@cause",
                               *(f"{s}:A>B" for s in SHAPED), "shapes:*"])  # fmt: skip
            raise ConfigError(f"unknown strategy {name!r} (known: {known})")
        if kind == "shapes" and who != "*":
            raise ConfigError(f"strategy {name}: shapes takes only * (every shape and pair)")
        if kind in ("single", "shapes"):
            out.update(_singles(name, who, models, workers, both=kind == "shapes"))
        for shape in SHAPED if kind == "shapes" else [kind] if kind in SHAPED else []:
            pairs = [(a, b) for a in models for b in models] if who == "*" else [_pair(name, who)]
            for a, b in pairs:
                _known(name, a, workers)
                _known(name, b, workers)
                out[f"{shape}:{a}>{b}"] = {
                    "conductor": {"backend": "static", "worker": b, "shape": shape, "helper": a}
                }
    if not out:
        raise ConfigError("no strategies given")
    return out


def _singles(
    name: str, who: str, models: list[str], workers: Mapping[str, Any], *, both: bool
) -> dict[str, dict[str, Any]]:
    """``single:NAME`` (``@cause``: in the second wording); ``both``: each in both."""
    who, at, wording = who.partition("@")
    if at and wording != "cause":
        raise ConfigError(f"strategy {name}: the wording after @ can only be cause")
    out: dict[str, dict[str, Any]] = {}
    for n in models if who == "*" else [who]:
        _known(name, n, workers)
        for w in ("direct", "cause") if both else [wording or "direct"]:
            layer = {"backend": "static", "worker": n, **({"wording": w} if w != "direct" else {})}
            out[f"single:{n}" + ("@cause" if w == "cause" else "")] = {"conductor": layer}
    return out


def _pair(name: str, who: str) -> tuple[str, str]:
    helper, sep, worker = who.partition(">")
    if not sep or not helper or not worker:
        raise ConfigError(f"strategy {name}: write {name.split(':')[0]}:HELPER>WORKER")
    return helper, worker


def _known(name: str, worker: str, workers: Mapping[str, Any]) -> None:
    if worker not in workers:
        raise ConfigError(f"strategy {name}: no worker {worker!r} (workers: {', '.join(workers)})")


def _is_model(worker: Any) -> bool:
    provider = getattr(worker, "provider", "")
    return provider in PROVIDERS and not PROVIDERS.get(provider).is_tool
