"""Cleaning steps, found by name."""
