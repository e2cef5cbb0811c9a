"""Output formats, loaded by name."""
