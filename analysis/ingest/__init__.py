"""Importers: one adapter per foreign format, and the pipeline that writes them to the store."""

from curriculab.analysis.ingest.common import Issue, MAX_OUTPUT_CHARS
from curriculab.analysis.ingest.pipeline import (
    FORMATS, Identity, IngestReport, Unit, discover, ingest, read_identities, read_unit,
)

__all__ = ["FORMATS", "Identity", "IngestReport", "Issue", "MAX_OUTPUT_CHARS", "Unit", "discover", "ingest",
           "read_identities", "read_unit"]
