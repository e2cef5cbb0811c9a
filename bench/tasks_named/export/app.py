import importlib


def export(rows, kind):
    """Rows of fields in the format ``kind`` (a module of the plugins package)."""
    plugin = importlib.import_module(f"plugins.{kind}")
    return "\n".join(plugin.render(row) for row in rows)
