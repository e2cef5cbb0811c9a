"""The LSP layer: the only place that knows LSP types.

``create_server`` builds the server object (``app``) and registers the handlers
(``handlers``) on it, as pygls servers do with decorators. ``review`` is the editor's
``fix.review.Reviewer``.
"""

from __future__ import annotations

import logging

from .app import ConductorServer
from .handlers import COMMANDS, FEATURES


def create_server() -> ConductorServer:
    server = ConductorServer()
    for method, handler, options in FEATURES:
        server.feature(method, options)(handler)
    for name, handler in COMMANDS:
        server.command(name)(handler)
    return server


def serve(tcp: str | None = None, log_file: str | None = None) -> None:
    """Run the server on stdio (or TCP for debugging)."""
    if log_file:
        logging.basicConfig(
            filename=log_file,
            level=logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.serve_stdio()


__all__ = ["ConductorServer", "create_server", "serve"]
