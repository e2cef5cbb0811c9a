"""The package version, in one place."""

__version__ = "0.1.0"


def extra(name: str) -> str:
    """How to add an optional extra as things stand: from the clone the install came from
    (no release is on the package index yet)."""
    return f"in the conductor-lsp clone: .venv/bin/pip install -e '.[{name}]'"
