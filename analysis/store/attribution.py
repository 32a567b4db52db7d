"""The store's statements for who made each attempt and which attempt it was. Ingest decides the
names (`analysis/ingest/attribution.py`: identities, canonical model names); these statements
write them, as `Store` methods run them."""

from __future__ import annotations

from typing import Any

Statements = list[tuple[str, list[Any]]]

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
the source said (NULL). Run with every batch written, in its transaction (`write_batch(then=...)`)."""

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

MODEL_NAMES = "select distinct model_raw, model from trajectories where model_raw is not null"
"""Each model name as a source gave it, with the canonical name stored for it."""


def run_identity(run_id: str, agent: str | None, model_raw: str | None, model: str | None) -> Statements:
    """Set a run's agent and model, and its attempts' models; None keeps what is stored."""
    statements: Statements = [
        (
            "update runs set agent = coalesce(?, agent), model = coalesce(?, model) where run_id = ?",
            [agent, model_raw, run_id],
        )
    ]
    if model_raw is not None:
        statements.append(
            ("update trajectories set model = ?, model_raw = ? where run_id = ?", [model, model_raw, run_id])
        )
    return statements


def renamed(model_raw: str, model: str) -> Statements:
    """The attempts of a source's model name stored under `model` from now on."""
    return [("update trajectories set model = ? where model_raw = ?", [model, model_raw])]
