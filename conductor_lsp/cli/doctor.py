"""``conductor-lsp doctor``: the rows of ``jobs.diagnose`` as a table."""

from __future__ import annotations

import asyncio

from rich.console import Console
from rich.table import Table

from ..config.schema import Config
from ..jobs import diagnose


def print_doctor(console: Console, config: Config, *, check: bool = False) -> None:
    """The report as a table; ``check`` asks each HTTP worker's provider with its key."""
    table = Table(title="conductor-lsp doctor")
    for col in ("what", "status", "detail"):
        table.add_column(col, overflow="fold")
    style = {"ok": "green", "no": "red", "info": "dim"}
    for what, status, detail in asyncio.run(diagnose(config, check=check)):
        table.add_row(what, f"[{style[status]}]{status}[/]", detail.replace("[", r"\["))
    console.print(table)
