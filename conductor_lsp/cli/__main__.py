"""``python -m conductor_lsp.cli``: the same as the ``conductor-lsp`` command."""

from .main import entry

entry()
