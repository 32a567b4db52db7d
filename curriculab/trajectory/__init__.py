"""`curriculab.trajectory`: the bottom layer. The canonical trajectory model and its vocabularies,
each agent's tool table (`agents.yaml`) and the action normaliser, model-name canonicalisation
(`model_aliases.yaml`).

Imports nothing else of the project: everything else builds on it. The names below load on first
use, so that importing one light module (`trajectory.vocabulary`) does not build every model.
"""

import importlib
from typing import Any

_HOMES = {
    "NormalisedCall": "actions",
    "normalise_shell": "actions",
    "normalise_tool_call": "actions",
    "split_commands": "actions",
    "ACTIONS": "vocabulary",
    "HARNESS_ERRORS": "vocabulary",
    "OUTCOMES": "vocabulary",
    "TIERS": "vocabulary",
    "FORMAT_VERSION": "model",
    "FailureCode": "model",
    "Run": "model",
    "Step": "model",
    "Task": "model",
    "TestResult": "model",
    "Trajectory": "model",
    "canonical_model": "model_names",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
