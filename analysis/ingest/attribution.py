"""Who made each attempt, and which attempt it was: ingest's rules for the model and agent names
and the attempt numbers the store holds. The store runs the statements built here; it knows
nothing of model names or attempts."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curriculab.trajectory.model_names import canonical_model

if TYPE_CHECKING:
    from curriculab.analysis.store import Store

Statements = list[tuple[str, list]]

UNKNOWN_MODELS: Statements = [
    (
        """
    update trajectories t set model = coalesce(r.agent, t.run_id) || ' (model unknown)'
    from (select t2.trajectory_id, r2.agent from trajectories t2 left join runs r2 using (run_id)
          where t2.model is null) r
    where t.trajectory_id = r.trajectory_id
""",
        [],
    )
]
"""Attempts whose source names no model are attributed to their run's agent (or, lacking one, their
run) as `<agent> (model unknown)`, so no attempt drops out of an analysis; `model_raw` keeps what
the source said (NULL). Run with every batch written, in its transaction."""

NUMBER_ATTEMPTS: Statements = [
    (
        """
    update trajectories t set attempt = n.attempt from (
        select trajectory_id,
               row_number() over (partition by run_id, task_id order by started_at, trajectory_id) - 1 as attempt
        from trajectories
        where (run_id, task_id) in (select run_id, task_id from trajectories where attempt is null)
    ) n
    where t.trajectory_id = n.trajectory_id and t.attempt is null
""",
        [],
    )
]
"""Attempts without a number get one: their order (by start time) within run and task."""


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


def identity_statements(assigned: Mapping[str, Identity]) -> Statements:
    """Set each run's agent and model (and its attempts' models, canonicalised) from the identity
    its input matched; what an identity leaves None keeps what is stored."""
    statements: Statements = []
    for run_id, identity in assigned.items():
        statements.append(
            (
                "update runs set agent = coalesce(?, agent), model = coalesce(?, model) where run_id = ?",
                [identity.agent, identity.model, run_id],
            )
        )
        if identity.model is not None:
            statements.append(
                (
                    "update trajectories set model = ?, model_raw = ? where run_id = ?",
                    [canonical_model(identity.model), identity.model, run_id],
                )
            )
    return statements


def recanonicalised(store: Store) -> Statements:
    """Attempts stored under an older canonical name get today's: the alias table grew
    (`claude-sonnet-4-0` became `claude-sonnet-4-20250514`) since those rows were written."""
    rows = store.query("select distinct model_raw, model from trajectories where model_raw is not null")[1]
    return [
        ("update trajectories set model = ? where model_raw = ?", [canonical_model(raw), raw])
        for raw, stored in rows
        if canonical_model(raw) != stored
    ]
