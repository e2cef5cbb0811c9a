"""The LSP layer: the only place that knows LSP types."""

from .app import ConductorServer, create_server, serve

__all__ = ["ConductorServer", "create_server", "serve"]
