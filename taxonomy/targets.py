"""What the planner reads of a taxonomy version: each code's remediation target (curriculum effect,
tiers, note), without building the validated `Taxonomy`. `planner_use` asks for it hundreds of times
per `report` and `plan`, which then need neither pydantic nor the versions a taxonomy maps from.

A shipped version's file is read as it is (tests validate every shipped file through
`load_taxonomy` and hold the two readings equal); any other source goes through `load_taxonomy`.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from curriculab.taxonomy.versions import NEWEST, PACKAGE_DIR, read_yaml


class PlannerTarget(NamedTuple):
    """The part of a code's `RemediationTarget` the planner's rule reads."""

    curriculum_effect: bool
    """False where no curriculum helps (verifier or infrastructure work)."""
    tiers: tuple[str, ...]
    """Test tiers whose tests exercise the missing skill (none: the code does not move tiers)."""
    note: str
    """What the remediation is, in words."""


class PlannerView(NamedTuple):
    """One taxonomy version as the planner reads it."""

    version: str
    """The version label (`v6`)."""
    targets: dict[str, PlannerTarget | None]
    """Every code of the version, in its order, with its target (None: the planner ignores the code)."""


_SHIPPED_NAME = re.compile(r"v\d+")


@functools.cache
def planner_view(source: str | None = None) -> PlannerView:
    """The planner's view of a taxonomy version (`v6`; None: the newest), or of a YAML file."""
    source = source or NEWEST
    path = PACKAGE_DIR / f"{source}.yaml"
    if _SHIPPED_NAME.fullmatch(source) and path.is_file():
        doc = read_yaml(path)
        return PlannerView(str(doc["version"]), {str(c["code"]): _target(c.get("target")) for c in doc["codes"]})
    from curriculab.taxonomy.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(source)
    return PlannerView(
        taxonomy.version,
        {c.code: None if c.target is None else _target(c.target.model_dump()) for c in taxonomy.codes},
    )


def _target(target: dict[str, Any] | None) -> PlannerTarget | None:
    """A target as the file (or `RemediationTarget.model_dump`) gives it, with `RemediationTarget`'s defaults."""
    if target is None:
        return None
    return PlannerTarget(
        bool(target.get("curriculum_effect", True)), tuple(target.get("tiers") or ()), str(target.get("note", ""))
    )
