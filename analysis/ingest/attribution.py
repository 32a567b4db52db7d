"""Who made each attempt: ingest's rules for the model and agent names (identity files, canonical
model names). The store writes what is decided here (`Store.attribute`, `Store.number_attempts`,
their SQL in `analysis/store/attribution.py`); it knows nothing of how names are chosen."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curriculab.analysis.store import RunIdentity
from curriculab.trajectory.model_names import canonical_model

if TYPE_CHECKING:
    from curriculab.analysis.store import Store


@dataclass(frozen=True)
class Identity:
    """Who ran the runs read from matching inputs, where the files do not say (or say wrong)."""

    path: str | None = None
    """A glob over the input's absolute path (`*/20250818_factory-droid_*/*`); None: every input of the call."""
    agent: str | None = None
    """The agent (harness) name to record; None keeps what the files say."""
    model: str | None = None
    """The model name to record (canonicalised as any other); None keeps what the files say."""

    def __post_init__(self) -> None:
        if self.agent is None and self.model is None:
            raise ValueError(
                f"identity for {self.path or 'every input'} sets neither agent nor model. Give one or both"
            )

    def matches(self, path: Path) -> bool:
        return self.path is None or fnmatch.fnmatch(os.path.abspath(path), self.path)


def read_identities(path: Path) -> list[Identity]:
    """A mapping file: a YAML list of `{path: <glob>, agent: <name>, model: <name>}`."""
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(
            f"{path}: cannot read it as an identity file ({exc}). Write a YAML list of "
            "{path: <glob>, agent: <name>, model: <name>}"
        ) from None
    if not isinstance(doc, list):
        raise ValueError(
            f"{path}: expected a YAML list of {{path: <glob>, agent: <name>, model: <name>}}. Fix the file"
        )
    identities = []
    for k, entry in enumerate(doc):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("path"), str)
            or set(entry) - {"path", "agent", "model"}
        ):
            raise ValueError(
                f"{path}: entry {k} must have a `path` glob and only `agent` and `model` besides. Fix entry {k}"
            )
        try:
            identities.append(Identity(entry["path"], entry.get("agent"), entry.get("model")))
        except ValueError as exc:
            raise ValueError(f"{path}: entry {k}: {exc}") from None
    return identities


def run_identities(assigned: Mapping[str, Identity]) -> dict[str, RunIdentity]:
    """Each run's identity from the identity its input matched, its model canonicalised; what an
    identity leaves None keeps what is stored."""
    return {
        run_id: RunIdentity(
            identity.agent, identity.model, canonical_model(identity.model) if identity.model is not None else None
        )
        for run_id, identity in assigned.items()
    }


def renames(store: Store) -> list[tuple[str, str]]:
    """(model name as given, today's canonical name) where the store holds an older one: the alias
    table grew (`claude-sonnet-4-0` became `claude-sonnet-4-20250514`) since those rows were written."""
    return [(raw, canonical_model(raw)) for raw, stored in store.model_names() if canonical_model(raw) != stored]
