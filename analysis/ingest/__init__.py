"""Importers: one adapter per foreign format, and the pipeline that writes them to the store."""

from curriculab.analysis.ingest.attribution import Identity, read_identities
from curriculab.analysis.ingest.pipeline import FORMATS, IngestReport, Unit, discover, ingest, read_unit
from curriculab.analysis.issues import Issue

__all__ = [
    "FORMATS",
    "Identity",
    "IngestReport",
    "Issue",
    "MAX_OUTPUT_CHARS",
    "Unit",
    "discover",
    "ingest",
    "read_identities",
    "read_unit",
]


def __getattr__(name: str):
    if name == "MAX_OUTPUT_CHARS":  # beside the importers, which a discovery or a no-op re-ingest never loads
        from curriculab.analysis.ingest.common import MAX_OUTPUT_CHARS

        return MAX_OUTPUT_CHARS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
