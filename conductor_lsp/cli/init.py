"""``conductor-lsp init [PATH]``: a working ``conductor.toml`` from what this machine has.

Provider keys in the environment (their names, never their values) and OpenAI-compatible
servers on loopback become workers; the user picks (or ``--yes`` takes all) and says who
conducts. Prices are not written: they are looked up each load (``configure.prices``), so
they do not go stale in the file; a price written by hand still wins."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from ..config.schema import WorkerConfig
from ..configure import load_config
from ..configure.discover import PROBE_SECONDS, SERVERS, Found, discover, provider_url
from ..configure.prices import price_endpoint
from ..errors import ConductorError, ConfigError
from .doctor import print_doctor

Ask = Callable[[str], str]


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "init", help="write conductor.toml from the models this machine reaches", parents=parents
    )
    p.add_argument("--yes", action="store_true", help="take every model found; static conducts")
    p.add_argument("--force", action="store_true", help="overwrite an existing conductor.toml")
    p.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="also ask this OpenAI-compatible server (URL ends in /v1; NAME= skips one); "
        f"the defaults: {', '.join(f'{k} {v}' for k, v in SERVERS.items())}",
    )
    p.add_argument("--timeout", type=float, default=PROBE_SECONDS, help="seconds per server")
    return p


def servers_from(args: Sequence[str]) -> dict[str, str]:
    out = dict(SERVERS)
    for item in args:
        name, sep, url = item.partition("=")
        if sep and name.strip() and not url.strip():
            out.pop(name.strip(), None)  # NAME= : do not ask that server
            continue
        if not sep or not name.strip() or not url.startswith(("http://", "https://")):
            raise ConfigError(f"--server {item!r}: write NAME=URL, the URL ending in /v1")
        out[name.strip()] = url.strip()
    return out


class NoAnswer(Exception):
    """Standard input ended before the first question was answered (a script, CI, an
    editor task run ``init`` with no terminal)."""


#: What init says when nobody is there to answer.
NO_TERMINAL = (
    "no answer on standard input (no terminal?): taking every model found, static "
    "conducts (as --yes does)\n"
)


def choose(found: list[Found], yes: bool, ask: Ask) -> tuple[list[Found], Found | None]:
    """(the workers, the model that conducts or None for static); ``ask`` raises
    ``NoAnswer`` at the end of input, which takes the ``--yes`` path."""
    if yes:
        return found, None
    picked = ask("Which become workers? numbers, comma-separated [all]: ").strip()
    workers = found if not picked else [found[int(n) - 1] for n in _numbers(picked, len(found))]
    try:
        conductor = ask(
            "Who conducts? 's' for static (one call to the strongest) or a number [s]: "
        )
    except NoAnswer:
        return workers, None  # the default
    conductor = conductor.strip().lower()
    if conductor in ("", "s", "static"):
        return workers, None
    return workers, found[_numbers(conductor, len(found))[0] - 1]


def _numbers(text: str, most: int) -> list[int]:
    try:
        out = [int(n) for n in text.replace(" ", "").split(",") if n]
    except ValueError as e:
        raise ConfigError(f"{text!r}: give numbers between 1 and {most}") from e
    if not out or any(not 1 <= n <= most for n in out):
        raise ConfigError(f"{text!r}: give numbers between 1 and {most}")
    return out


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string


def _price_note(f: Found) -> str:
    """The price the worker will get on load, as a comment (not written: it would go stale)."""
    end = WorkerConfig(provider=f.provider, model=f.model, base_url=f.base_url)
    where = price_endpoint(end, f.provider).text()
    if not (end.price_in or end.price_out):
        return f"# {where}"
    return (
        f"# {where}: ${end.price_in:g} in / ${end.price_out:g} out per million tokens today "
        "(looked up on each load; price_in and price_out here win)"
    )


def render(workers: list[Found], conductor: Found | None) -> str:
    """The file's text: one table per worker, the strongest local model marked by size."""
    lines = ["# Written by `conductor-lsp init`; `conductor-lsp doctor` checks it.", ""]
    lines += ["[conductor]"]
    if conductor is None:
        lines += ['backend = "static"  # one call to the strongest worker, with its retry']
    else:
        lines += ['backend = "openai"', f"model = {_string(conductor.model)}"]
        lines += [f"base_url = {_string(conductor.base_url or provider_url(conductor.provider))}"]
        if conductor.api_key_env:
            lines += [f"api_key_env = {_string(conductor.api_key_env)}"]
    local = sorted((f for f in workers if f.local), key=Found.size)
    ranks = {f.name: r for r, f in enumerate(local, 1)}
    for f in workers:
        lines += ["", f"[workers.{f.name}]", _price_note(f), f"provider = {_string(f.provider)}"]
        lines += [f"model = {_string(f.model)}"]
        if f.base_url:
            lines += [f"base_url = {_string(f.base_url)}"]
        if f.api_key_env:
            lines += [f"api_key_env = {_string(f.api_key_env)}"]
        if f.local:
            lines += [f"strength = {ranks[f.name]}  # by size among the free models"]
    return "\n".join(lines) + "\n"


def _answer() -> str:
    """A line from standard input; its end is ``NoAnswer`` (an empty line is the default)."""
    try:
        return input()
    except EOFError:
        raise NoAnswer from None


def run_init(root: Path, args: argparse.Namespace, console: Console) -> int:
    target = root / "conductor.toml"
    if target.exists() and not args.force:
        raise ConductorError(f"{target} exists; nothing written (--force replaces it)")
    found = discover(os.environ, servers_from(args.server), args.timeout)
    say = lambda line: console.print(line, markup=False, highlight=False, end="")  # noqa: E731
    if not found:
        say(
            "found no models: no provider key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY, "
            "GEMINI_API_KEY) and no server answers on "
            f"{', '.join(SERVERS.values())}; nothing written\n"
        )
        return 1
    say(f"found {len(found)} model(s):\n")
    for i, f in enumerate(found, 1):
        say(f"  {i}. {f.name}: {f.model} ({f.why})\n")
    try:
        workers, conductor = choose(found, args.yes, lambda q: say(q) or _answer())
    except NoAnswer:
        say("\n" + NO_TERMINAL)
        workers, conductor = found, None
    text = render(workers, conductor)
    tmp = target.with_name(".conductor.toml.init")
    tmp.write_text(text, encoding="utf-8")
    try:
        load_config(root, tmp)  # checked before it takes the real name
    except ConductorError:
        tmp.unlink()
        raise
    os.replace(tmp, target)
    config = load_config(root)
    say(f"wrote {target} ({len(workers)} worker(s), conductor {config.conductor.backend})\n")
    print_doctor(console, config)
    return 0
