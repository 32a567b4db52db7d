"""Problems with input, named once for every part of curriculab that reads files (importers,
label imports): the file, the record, the field, and what to do."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass
class Issue:
    """A problem with one input: quarantined (error) or repaired and kept (warning)."""

    path: str
    """File or directory the problem is in."""
    reason: str
    """What is wrong and how to fix it, naming the record and field."""
    record: str | None = None
    """Record within the file (a trial name, a line number, a session id)."""
    field: str | None = None
    """Field at fault, as a dotted path (e.g. `steps[3].step_id`)."""
    severity: str = "error"
    """`error`: the record was quarantined; `warning`: it landed, repaired as the reason says."""
    source_format: str | None = None
    """Importer that found the problem."""

    def as_row(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.reason


class IngestFailure(Exception):
    """Raised inside an importer to quarantine the record it is reading."""

    def __init__(self, issue: Issue):
        super().__init__(issue.reason)
        self.issue = issue


def make_issue(
    path: Path | str,
    problem: str,
    fix: str,
    *,
    record: str | None = None,
    field: str | None = None,
    severity: str = "error",
    source_format: str | None = None,
) -> Issue:
    """An issue whose reason reads `<path>: record <r>: field <f>: <problem>. <fix>`."""
    where = str(path)
    if record is not None:
        where += f": record {record}"
    if field is not None:
        where += f": field {field}"
    return Issue(
        path=str(path),
        reason=f"{where}: {problem}. {fix}",
        record=record,
        field=field,
        severity=severity,
        source_format=source_format,
    )


def fail(path: Path | str, problem: str, fix: str, **kwargs: Any) -> IngestFailure:
    return IngestFailure(make_issue(path, problem, fix, **kwargs))
