"""The command line: the same jobs as the editor, headless.

One module a command where it needs more than a few lines (``doctor``, ``evaluate`` for
``eval``, ``show_episodes``, ``train``); ``review`` is the terminal's ``fix.review.Reviewer``.
"""

from .main import entry, main

__all__ = ["entry", "main"]
