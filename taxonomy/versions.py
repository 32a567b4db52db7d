"""The shipped taxonomy versions, read from the file names alone: the CLI's defaults need the
newest version without loading YAML or pydantic."""

from pathlib import Path

PACKAGE_DIR = Path(__file__).parent


def newest_version() -> str:
    """The newest taxonomy version shipped with curriculab: the default wherever codes are made or read."""
    return max((p.stem for p in PACKAGE_DIR.glob("v*.yaml") if p.stem[1:].isdigit()), key=lambda v: int(v[1:]))


NEWEST = newest_version()
"""The newest shipped version (`v5`): what `code`, `agreement`, labels, the report and the dashboard use by default."""
