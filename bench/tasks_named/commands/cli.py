import importlib

COMMANDS = {
    "count": "cmds.count:run",
    "upper": "cmds.upper:run",
    "rev": "cmds.rev:run",
}


def dispatch(name, arg):
    module, func = COMMANDS[name].split(":")
    return getattr(importlib.import_module(module), func)(arg)
