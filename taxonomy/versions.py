"""The shipped taxonomy versions, read from the file names alone: the CLI's defaults need the
newest version without loading YAML or pydantic."""

from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).parent


def newest_version() -> str:
    """The newest taxonomy version shipped with curriculab: the default wherever codes are made or read."""
    return max((p.stem for p in PACKAGE_DIR.glob("v*.yaml") if p.stem[1:].isdigit()), key=lambda v: int(v[1:]))


NEWEST = newest_version()
"""The newest shipped version (`v5`): what `code`, `agreement`, labels, the report and the dashboard use by default."""


def read_yaml(path: Path) -> Any:
    """A taxonomy file's document, through libyaml's safe loader where PyYAML was built with it: ten
    times faster than the pure-Python one; `report`/`plan` read the taxonomy files on every call
    (through `planner_use`), and `code` loads every version to map between them."""
    import yaml

    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
