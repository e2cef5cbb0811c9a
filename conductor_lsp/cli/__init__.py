"""The command line: the same jobs as the editor, headless."""

from .main import main

__all__ = ["main"]
