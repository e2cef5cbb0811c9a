"""``python -m conductor_lsp.cli``: the same as the ``conductor-lsp`` command."""

import sys

from .main import main

sys.exit(main())
