"""Measured difficulty: the stored IRT fit, abilities, informative and misplaced tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import Store

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import _SYSTEM, EVERYTHING, TIME_BOUND, Scope, SqlRead, Statement, _where


def task_difficulty(
    store: Store, *, task_type: str | None = None, measured_tier: str | None = None, scope: Scope | None = None
) -> pd.DataFrame:
    """Measured difficulty per task from the last IRT fit, beside the authored tier.

    Columns: task_id, task_type, language, tier_authored, difficulty_authored, measured_tier,
    difficulty (b; higher is harder), difficulty_se, discrimination, discrimination_se,
    n_attempts, pass_rate, misplaced (authored tier differs from measured). A `scope` keeps the
    tasks its attempts tried (the fit itself is over every attempt).
    """
    where, params = _where(
        {"task_type": "task_type", "measured_tier": "measured_tier"}, task_type=task_type, measured_tier=measured_tier
    )
    if scope is not None and scope.active():
        clause, scope_params = scope.clause("a")
        where = f"{where} and " if where else " where "
        where += f"task_id in (select a.task_id from trajectories a where {clause})"
        params = [*params, *scope_params]
    return store.frame(f"select * from v_task_difficulty{where} order by difficulty desc", params)


def tasks_tried(store: Store, *, scope: Scope | None = None) -> int:
    """How many distinct tasks the scope's attempts tried (flagged tasks too: the fit leaves those out)."""
    clause, params = (scope or EVERYTHING).clause("a")
    return int(store.query(f"select count(distinct a.task_id) from trajectories a where {clause}", params).scalar())


def _models_in(scope: Scope | None, where: str, params: list[Any]) -> tuple[str, list[Any]]:
    """`where` narrowed to the models with attempts in `scope`."""
    if scope is None or not scope.active():
        return where, params
    clause, extra = scope.clause("a")
    condition = f"model in (select a.model from trajectories a where {clause})"
    return (f"{where} and {condition}" if where else f" where {condition}"), [*params, *extra]


@SqlRead
def model_abilities(store: Store, *, model: str | None = None, scope: Scope | None = None) -> Statement:
    """Measured ability per model from the last IRT fit (with a `scope`, the models it holds).

    Columns: model, ability (θ), ability_se, n_attempts, pass_rate, kind.
    """
    where, params = _models_in(scope, *_where({"model": "model"}, model=model))
    return (
        f"select model, ability, ability_se, n_attempts, pass_rate, kind from irt_models{where} order by ability desc",
        params,
    )


def informative_tasks(
    store: Store, model: str | None = None, band: tuple[float, float] = (0.2, 0.8), *, scope: Scope | None = None
) -> pd.DataFrame:
    """Which tasks still carry training signal for which model.

    Columns: model, task_id, attempts, passes, observed_pass_rate, predicted_pass_rate, signal
    (predicted p(1 − p)), in_band (predicted pass rate inside `band`).
    """
    lo, hi = band
    if not 0 <= lo < hi <= 1:
        raise ValueError(f"band {band} is not a range inside [0, 1]. Pass two numbers like (0.2, 0.8)")
    where, params = _models_in(scope, *_where({"model": "model"}, model=model))
    return store.frame(f"select * from informative_tasks(?, ?){where} order by model, signal desc", [lo, hi, *params])


def fit_staleness(store: Store) -> dict[str, int]:
    """How the stored IRT fit compares with the attempts now in the store.

    Keys: fitted (attempts the fit used), current (attempts with a verdict now, on tasks task health
    does not flag). They differ when the store changed since the last fit (or a task was flagged or
    checked); `curriculab difficulty` or `report --refit` refits.
    """
    _, rows = store.query(f"""select (select coalesce(sum(n_attempts), 0) from irt_tasks),
                                    (select count(*) from trajectories where outcome in ('passed', 'failed')
                                     and task_id not in (select task_id from ({TASK_HEALTH_SQL}) where flagged))""")
    return {"fitted": int(rows[0][0]), "current": int(rows[0][1])}


@SqlRead
def tier_calibration(store: Store) -> Statement:
    """Authored tier × measured tier, in tasks. Columns: tier_authored, measured_tier, tasks."""
    return (
        """select tier_authored, measured_tier, count(*) as tasks from v_task_difficulty
                          where tier_authored is not null group by all order by all""",
        [],
    )


@SqlRead
def misplaced_tasks(store: Store, limit: int = 15) -> Statement:
    """Tasks whose authored tier disagrees with the measured one, farthest from the median first.

    Columns: task_id, tier_authored, measured_tier, difficulty, difficulty_se, pass_rate, n_attempts.
    """
    return (
        """select task_id, tier_authored, measured_tier, difficulty, difficulty_se, pass_rate, n_attempts
                          from v_task_difficulty where misplaced
                          order by abs(difficulty - (select median(difficulty) from irt_tasks)) desc limit ?""",
        [limit],
    )


@SqlRead
def signal_efficiency(store: Store, band: tuple[float, float] = (0.2, 0.8), *, model: str | None = None) -> Statement:
    """Per model: tasks attempted, share with mixed outcomes (0 < p < 1), mean expected p(1 − p),
    and how many tasks fall in the band of predicted pass rate that still carries signal.

    Columns: model, tasks, share_mixed, mean_signal, in_band, share_in_band.
    """
    lo, hi = band
    where, params = _where({"model": "model"}, model=model)
    return (
        f"""
        select model, count(*) as tasks, avg((observed_pass_rate > 0 and observed_pass_rate < 1)::int) as share_mixed,
               avg(signal) as mean_signal, count(*) filter (in_band) as in_band, avg(in_band::int) as share_in_band
        from informative_tasks(?, ?){where} group by 1 order by 1""",
        [lo, hi, *params],
    )


def fitted_tasks(store: Store) -> pd.DataFrame:
    """The stored IRT fit per task, hardest first. Columns: task_id, difficulty, discrimination,
    difficulty_se, n_attempts, pass_rate, measured_tier."""
    return store.frame("""select task_id, difficulty, discrimination, difficulty_se, n_attempts, pass_rate, measured_tier
                          from irt_tasks order by difficulty desc""")


HEALTH_MIN_ATTEMPTS = 10
"""Attempts with a verdict a task needs before it may be flagged: never solved in 10 bounds its pass
rate under 26% (95%, the rule of three), enough to ask whether it is broken."""
HEALTH_MIN_SYSTEMS = 3
"""Systems (agent · model) that must have tried a task before it may be flagged: one system's
failures say little about the task."""

TASK_HEALTH_SQL = f"""
with counted as (
    select t.task_id, count(*) filter (t.outcome <> 'error') as attempts,
           count(distinct {_SYSTEM.format(model="t.model")}) filter (t.outcome <> 'error') as systems,
           count(*) filter (t.outcome = 'passed') as passes,
           count(distinct {_SYSTEM.format(model="t.model")}) filter (t.outcome = 'passed') as systems_solved,
           count(*) filter (t.outcome = 'error') as harness_faults,
           count(*) filter (t.outcome = 'failed' and t.harness_error = 'agent_timeout') as timed_out
    from trajectories t left join runs r on r.run_id = t.run_id
    where t.model is not null group by t.task_id)
select c.*, c.passes / nullif(c.attempts, 0) as pass_rate,
       case when c.attempts < {HEALTH_MIN_ATTEMPTS} or c.systems < {HEALTH_MIN_SYSTEMS} then 'too few attempts to tell'
            when c.passes = 0 and c.timed_out >= {TIME_BOUND} * c.attempts then 'never solved: time-bound'
            when c.passes = 0 then 'never solved: possibly broken'
            when c.passes = c.attempts then 'always solved: possibly trivial'
            else 'ok' end as health,
       k.task_id is not null as checked,
       k.task_id is null and c.attempts >= {HEALTH_MIN_ATTEMPTS} and c.systems >= {HEALTH_MIN_SYSTEMS}
           and (c.passes = 0 or c.passes = c.attempts) as flagged
from counted c left join task_checks k on k.task_id = c.task_id
"""
"""Per task: attempts, systems, passes and who solved it, harness faults and timeouts on it, its
health and whether it is flagged (never or always solved, not checked): one definition for the
health table, the difficulty fit and the task mix."""


@SqlRead
def task_health(store: Store, *, flagged_only: bool = False) -> Statement:
    """Whether each task looks broken or trivial: a task no system ever solved, or every system
    always solved, in at least `HEALTH_MIN_ATTEMPTS` attempts by `HEALTH_MIN_SYSTEMS` systems, is
    flagged until a person checks it (`curriculab tasks checked`); flagged tasks stay out of
    difficulty fits, capability evidence and task mixes.

    Columns: task_id, attempts (with a verdict), systems, passes, systems_solved, harness_faults
    (attempts the infrastructure failed), timed_out (failures that ran out of time), pass_rate,
    health (`never solved: time-bound` where `TIME_BOUND` or more of its attempts ran out of time:
    the agents needed more time, which says nothing of whether the task works), checked, flagged.
    """
    return (
        f"select * from ({TASK_HEALTH_SQL}) {'where flagged ' if flagged_only else ''}"
        "order by flagged desc, health <> 'ok' desc, pass_rate, task_id",
        [],
    )


@SqlRead
def solve_matrix(store: Store, *, model: str | None = None, scope: Scope | None = None) -> Statement:
    """Per system (agent · model) and task: trials, attempts with a verdict and passes, the system ×
    task solve matrix (with a `scope`, of its attempts). Columns: system, model, task_id, trials
    (every trial, an infrastructure fault too: the leaderboard's accounting), attempts, passes,
    solved (passes / attempts)."""
    where, params = _where({"model": "t.model"}, after_where=True, model=model)
    clause, extra = (scope or EVERYTHING).clause("t")
    if clause != "true":
        where, params = f"{where} and {clause}", [*params, *extra]
    return (
        f"""
        select {_SYSTEM.format(model="t.model")} as system, t.model, t.task_id, count(*) as trials,
               count(*) filter (t.outcome <> 'error') as attempts, count(*) filter (t.outcome = 'passed') as passes,
               count(*) filter (t.outcome = 'passed') / nullif(count(*) filter (t.outcome <> 'error'), 0) as solved
        from trajectories t left join runs r on r.run_id = t.run_id
        where t.model is not null {where} group by all order by all""",
        params,
    )
