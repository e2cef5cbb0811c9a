"""conductor-lsp: a conducted team of coding models behind your editor."""

__version__ = "0.1.0"
