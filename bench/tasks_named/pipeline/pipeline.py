import importlib
import pkgutil

import steps


def clean(text):
    """Every module of the steps package, in the order of their ORDER, applied in turn."""
    found = [
        importlib.import_module(f"steps.{m.name}") for m in pkgutil.iter_modules(steps.__path__)
    ]
    for step in sorted(found, key=lambda s: s.ORDER):
        text = step.apply(text)
    return text
