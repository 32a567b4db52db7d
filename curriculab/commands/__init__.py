"""The `curriculab` commands, one module per stage. Each parses its arguments, calls one library
function and prints what it returned; the logic lives in the library.

A command's module is imported when the command runs (`curriculab reward` never imports the
training or dashboard commands); `COMMANDS` imports them all."""

import importlib
from typing import Any

HOMES = {
    "ingest": "ingest",
    "simulate": "ingest",
    "query": "store",
    "db": "store",
    "code": "coding",
    "labels": "coding",
    "classifier": "coding",
    "agreement": "coding",
    "report": "report",
    "difficulty": "report",
    "compare": "compare",
    "plan": "plan",
    "reward": "problems",
    "problems": "problems",
    "tasks": "tasks",
    "train": "train",
    "loop": "train",
    "model": "train",
    "dashboard": "app",
    "demo": "app",
}
"""Every top-level command (groups carry their subcommands), by the module that defines it under
the same name."""


def load(name: str) -> Any:
    """The click command `name` (a key of HOMES), its module imported now."""
    return getattr(importlib.import_module(f"{__name__}.{HOMES[name]}"), name)


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":  # every command, each module imported
        return tuple(load(command) for command in HOMES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
