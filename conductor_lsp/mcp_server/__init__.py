"""The MCP door: ``conductor-lsp mcp`` serves the verified fix to agents (Claude Code, Codex
CLI, Cursor, Zed, Continue) over stdio with the official ``mcp`` SDK (the ``mcp`` extra).
Tools: ``fix``, ``plan``, ``undo``, ``candidates``; the same workspace rules as the
language server (no path outside the root, one write at the end, a checkpoint to undo)."""

from .tools import Door

__all__ = ["Door"]
