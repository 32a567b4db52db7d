"""curriculab: turn coding-agent trajectories into the next round of training data.

The small public API lives here; the subpackages `curriculab.trajectory` (the bottom layer: the
trajectory model and its vocabularies), `curriculab.taxonomy`, `curriculab.analysis`,
`curriculab.planner` and `curriculab.training` hold the rest, and `curriculab.commands` the CLI. Names are loaded on first use, so
importing one subpackage (the taxonomy, say) does not load the others.
"""

import importlib

_PUBLIC = {
    "IngestReport": "curriculab.analysis.ingest",
    "Issue": "curriculab.analysis.ingest",
    "Identity": "curriculab.analysis.ingest",
    "ingest": "curriculab.analysis.ingest",
    "simulate_corpus": "curriculab.analysis.simulate",
    "Store": "curriculab.analysis.store",
    "StoreError": "curriculab.analysis.store",
    "train": "curriculab.training.grpo",
    "TrainOptions": "curriculab.training.options",
    "TrainResult": "curriculab.training.grpo",
    **{
        name: "curriculab.trajectory.model"
        for name in ("FORMAT_VERSION", "FailureCode", "Run", "Step", "Task", "TestResult", "Trajectory")
    },
}


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    if name == "__version__":  # looked up on first use: reading package metadata is slow, for every import
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("curriculab")
        except PackageNotFoundError:  # running from a source tree without installing
            return "0.0.0+source"
    raise AttributeError(f"module 'curriculab' has no attribute {name!r}")


__all__ = [
    "FORMAT_VERSION",
    "FailureCode",
    "Identity",
    "IngestReport",
    "Issue",
    "Run",
    "Step",
    "Store",
    "StoreError",
    "Task",
    "TestResult",
    "TrainOptions",
    "TrainResult",
    "Trajectory",
    "__version__",
    "ingest",
    "simulate_corpus",
    "train",
]
