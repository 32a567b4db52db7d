"""`curriculab.taxonomy`: the versioned failure taxonomy (`v1.yaml` … `v3.yaml`), the coders
(rules, classifier, judge, verifier), agreement statistics, and code extraction from a completion.

It builds on `curriculab.trajectory` (the canonical model, vocabularies, action normaliser and
model names, which lived here before). Their names stay importable from here, and the old module
paths (`curriculab.taxonomy.model`, `.vocabulary`, `.actions`, `.model_names`) are the trajectory
modules themselves, so code written against them keeps working. Names load on first use.
"""

import importlib

from curriculab.trajectory import _HOMES

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"curriculab.trajectory.{_HOMES[name]}"), name)
