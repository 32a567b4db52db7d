"""Time and task metadata: how long agents ran against their tasks' time limits, per system and per
task, and which runs' tasks the store knows nothing about (no `task.yaml`/`task.toml` imported).

The agent's own time is `agent_ended_at − agent_started_at` where the run recorded them
(Terminal-Bench's per-trial results, Harbor's `agent_execution`); elsewhere the trial's, which also
counts setting up the environment and running the tests (`clock` says which). A task's limit is
its `max_agent_timeout_sec` (Terminal-Bench `task.yaml`) or `[agent] timeout_sec` (Harbor
`task.toml`), known only once its folder is imported (`curriculab tasks import`).
"""

from __future__ import annotations

from typing import Any

from curriculab.analysis.queries.core import _SYSTEM, EVERYTHING, Scope, SqlRead, Statement
from curriculab.analysis.store import Store

NEAR_LIMIT = 0.95
"""An attempt that used this share of its task's time limit or more ran up against it."""

TASK_LIMIT_SQL = (
    "coalesce(try_cast(k.metadata->>'max_agent_timeout_sec' as double), "
    "try_cast(k.metadata->>'agent_timeout_sec' as double))"
)
"""A task's agent time limit in seconds (alias `k` for `tasks`), NULL where its metadata has none."""

_ATTEMPT_TIMES = f"""
    select t.trajectory_id, t.task_id, t.outcome, t.harness_error, {_SYSTEM.format(model="t.model")} as system,
           coalesce(date_diff('millisecond', t.agent_started_at, t.agent_ended_at),
                    date_diff('millisecond', t.started_at, t.ended_at)) / 1000.0 as seconds,
           case when t.agent_started_at is not null and t.agent_ended_at is not null then 'agent'
                when t.started_at is not null and t.ended_at is not null then 'trial' end as clock,
           {TASK_LIMIT_SQL} as limit_s
    from trajectories t left join runs r on r.run_id = t.run_id left join tasks k on k.task_id = t.task_id
    where t.outcome <> 'error' and t.model is not null and {{clause}}"""


@SqlRead
def time_use(store: Store, *, by: str = "system", scope: Scope | None = None) -> Statement:
    """How long attempts ran, against their task's time limit, per system (agent · model) or per
    task (`by="task"`), over attempts with a verdict.

    Columns: system or task_id, attempts, timed (attempts with a start and an end), clock (`agent`
    where every timed attempt carries the agent's own times, `trial` where none does, else
    `mixed`), median_s, p90_s, max_s, with_limit (attempts whose task's limit is known), limit_s
    (the task's limit; per task only), median_share (of the limit used, over with_limit),
    near_limit (attempts that used ≥ `NEAR_LIMIT` of it), timed_out (failures recorded as
    `agent_timeout`), timed_out_share (of attempts), passes.
    """
    if by not in ("system", "task"):
        raise ValueError(f"time_use is by 'system' or 'task', not {by!r}")
    key = "system" if by == "system" else "task_id"
    clause, params = (scope or EVERYTHING).clause("t")
    limit = ", any_value(limit_s) as limit_s" if by == "task" else ""
    return (
        f"""
        with a as ({_ATTEMPT_TIMES.format(clause=clause)})
        select {key}, count(*) as attempts, count(seconds) as timed,
               case when count(seconds) = 0 then null when bool_and(clock = 'agent') then 'agent'
                    when bool_and(clock = 'trial') then 'trial' else 'mixed' end as clock,
               median(seconds) as median_s, quantile_cont(seconds, 0.9) as p90_s, max(seconds) as max_s,
               count(*) filter (limit_s is not null and seconds is not null) as with_limit{limit},
               median(seconds / limit_s) filter (limit_s > 0) as median_share,
               count(*) filter (seconds >= {NEAR_LIMIT} * limit_s) as near_limit,
               count(*) filter (outcome = 'failed' and harness_error = 'agent_timeout') as timed_out,
               count(*) filter (outcome = 'failed' and harness_error = 'agent_timeout') / count(*) as timed_out_share,
               count(*) filter (outcome = 'passed') as passes
        from a group by {key} order by timed_out_share desc, {key}""",
        params,
    )


@SqlRead
def task_metadata_coverage(store: Store) -> Statement:
    """Per run: how many of its tasks the store holds the benchmark's own metadata for (a category,
    an authored difficulty or a time limit, from an imported `task.yaml` or `task.toml`). A
    leaderboard submission ships no task folders: until the benchmark's tasks are imported at the
    version the run names, per-category views, authored tiers and time limits are empty for it.

    Columns: run_id, system, dataset (the run's, with `==VERSION` where it names one), tasks,
    with_metadata, without_metadata, missing (up to five task ids without it), imported_as (the
    datasets its tasks' folders were imported at, `tasks import --dataset`), other_version (tasks
    imported at a dataset other than the run's).
    """
    return (
        f"""
        with per_task as (
            select distinct t.run_id, t.task_id, {_SYSTEM.format(model="t.model")} as system,
                   r.dataset || coalesce('==' || (r.config->>'dataset_version'), '') as dataset,
                   k.metadata->>'dataset' as imported_as,
                   (k.task_type is not null or k.difficulty_authored is not null or {TASK_LIMIT_SQL} is not null)
                       as known
            from trajectories t left join runs r on r.run_id = t.run_id left join tasks k on k.task_id = t.task_id)
        select run_id, any_value(system) as system, any_value(dataset) as dataset, count(*) as tasks,
               count(*) filter (known) as with_metadata, count(*) filter (not known) as without_metadata,
               array_to_string(list_slice(list(task_id order by task_id) filter (not known), 1, 5), ', ') as missing,
               string_agg(distinct imported_as, ', ' order by imported_as) as imported_as,
               count(*) filter (imported_as is not null and dataset is not null and imported_as <> dataset)
                   as other_version
        from per_task group by run_id order by without_metadata desc, run_id""",
        [],
    )


@SqlRead
def system_tasks(store: Store, *, scope: Scope | None = None) -> Statement:
    """Per system (agent · model) and task: what a task-by-task comparison needs.

    Columns: system, agent, model, task_id, trials (every trial), attempts (with a verdict), passes,
    timed_out (failures recorded as `agent_timeout`), median_s (the agent's own time where recorded,
    else the trial's), limit_s (the task's time limit, where known), category (the task's
    `task_type`), difficulty_authored.
    """
    clause, params = (scope or EVERYTHING).clause("t")
    return (
        f"""
        select {_SYSTEM.format(model="t.model")} as system, coalesce(r.agent, '(unknown)') as agent, t.model,
               t.task_id, count(*) as trials, count(*) filter (t.outcome <> 'error') as attempts,
               count(*) filter (t.outcome = 'passed') as passes,
               count(*) filter (t.outcome = 'failed' and t.harness_error = 'agent_timeout') as timed_out,
               median(coalesce(date_diff('millisecond', t.agent_started_at, t.agent_ended_at),
                               date_diff('millisecond', t.started_at, t.ended_at)) / 1000.0) as median_s,
               any_value({TASK_LIMIT_SQL}) as limit_s, any_value(k.task_type) as category,
               any_value(k.difficulty_authored) as difficulty_authored
        from trajectories t left join runs r on r.run_id = t.run_id left join tasks k on k.task_id = t.task_id
        where t.model is not null and {clause} group by all order by system, task_id""",
        params,
    )


@SqlRead
def system_failure_codes(store: Store, *, scope: Scope | None = None) -> Statement:
    """Per system, coder and code: failed attempts the code was found on (every coder's latest
    taxonomy version), beside the system's failures, so two systems' failure modes read side by side.

    Columns: system, coder, code, failures_with_code, failures, share (of failures).
    """
    clause, params = (scope or EVERYTHING).clause("t")
    return (
        f"""
        with failed as (
            select t.trajectory_id, {_SYSTEM.format(model="t.model")} as system
            from trajectories t left join runs r on r.run_id = t.run_id
            where t.outcome = 'failed' and t.model is not null and {clause}),
        totals as (select system, count(*) as failures from failed group by system),
        latest as (select coder, max(taxonomy_version) as taxonomy_version from failure_codes group by coder)
        select f.system, c.coder, c.code, count(distinct c.trajectory_id) as failures_with_code,
               any_value(n.failures) as failures, count(distinct c.trajectory_id) / any_value(n.failures) as share
        from failed f join failure_codes c using (trajectory_id) join latest l using (coder, taxonomy_version)
        join totals n using (system)
        group by all order by f.system, share desc, c.code""",
        params,
    )


def trajectory_terminal(store: Store, trajectory_id: str) -> dict[str, Any]:
    """Where an attempt's terminal is kept and how long its agent ran against the task's limit.

    Keys: recording (path of the asciinema recording, or None), panes (path of the final screen, or
    None), agent_s (the agent's own time, None where the run did not record it), trial_s, limit_s
    (the task's time limit, None where unknown), harness_error.
    """
    _, rows = store.query(
        f"""
        select t.recording, t.panes, date_diff('millisecond', t.agent_started_at, t.agent_ended_at) / 1000.0,
               date_diff('millisecond', t.started_at, t.ended_at) / 1000.0, {TASK_LIMIT_SQL}, t.harness_error
        from trajectories t left join tasks k on k.task_id = t.task_id where t.trajectory_id = ?""",
        [trajectory_id],
    )
    keys = ("recording", "panes", "agent_s", "trial_s", "limit_s", "harness_error")
    return dict(zip(keys, rows[0])) if rows else dict.fromkeys(keys)
