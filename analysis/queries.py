"""The read API: every question the planner, the dashboard, the report and an analyst's notebook
ask of the store, as named functions that return pandas DataFrames with documented columns.

Filters are keyword arguments, always bound as parameters (never pasted into SQL); `None` means
"no filter". Nothing here writes. The SQL lives here and in `analysis/store` only, so a module
above the store never depends on table layouts.

    from curriculab.analysis import queries
    from curriculab.analysis.store import Store

if TYPE_CHECKING:  # every function returns a DataFrame, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import this module and never need it

    with Store("curriculab.duckdb", read_only=True) as store:
        queries.pass_rates(store, slice="tier", model="gpt-5-mini")
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import QueryResult, Store, check_filter
from curriculab.trajectory.vocabulary import AGENT_FAULTS

if TYPE_CHECKING:  # every function returns a DataFrame, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import this module and never make one

SLICES = ("overall", "task", "tier", "task_type", "language")
"""Dimensions `pass_rates` can slice by."""
COVERAGE_MIN = 0.5
"""A failure share is acted on (stated by the report, targeted by the planner) only where the coder
could judge at least this share of the failures (`coverage` of `failure_distribution`)."""
TRAINING_AGENT = "curriculab-grpo"
"""The agent name of a GRPO training run's rollouts: their attempts are training, not evaluation."""
KINDS = ("evaluation", "training", "all")
"""Which attempts a `Scope` covers: evaluation runs, training rollouts, or both."""


@dataclass(frozen=True)
class Scope:
    """Which attempts a view covers: the dashboard's filters, one set for every page.

    Every field is optional (None: no filter) except `kind`, which keeps training rollouts out of
    evaluation views unless asked for.
    """

    agent: str | None = None
    """The run's agent (`runs.agent`), e.g. `terminus-2`."""
    model: str | None = None
    """The canonical model name (`trajectories.model`)."""
    run_id: str | None = None
    """One run."""
    task_type: str | None = None
    """The task's type; `(none)` selects tasks without one."""
    language: str | None = None
    """The task's language; `(none)` selects tasks without one."""
    tier: str | None = None
    """The task's authored tier; `(none)` selects tasks without one."""
    kind: str = "evaluation"
    """evaluation (runs that are not GRPO training), training (its rollouts) or all."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def active(self) -> dict[str, str]:
        """The filters set, by field name (`kind` when it is not `all`)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) is not None and not (f.name == "kind" and self.kind == "all")
        }

    def clause(self, alias: str) -> tuple[str, list[Any]]:
        """`(<alias>.trajectory_id in (...))` selecting the scope's attempts, and its parameters;
        `true` when the scope covers everything."""
        conditions, params = [], []
        for name, column in (
            ("agent", "sr.agent"),
            ("model", "st.model"),
            ("run_id", "st.run_id"),
            ("task_type", "coalesce(sk.task_type, '(none)')"),
            ("language", "coalesce(sk.language, '(none)')"),
            ("tier", "coalesce(sk.tier_authored, '(none)')"),
        ):
            value = getattr(self, name)
            if value is not None:
                conditions.append(f"{column} = ?")
                params.append(value)
        if self.kind != "all":
            conditions.append(f"coalesce(sr.agent, '') {'<>' if self.kind == 'evaluation' else '='} ?")
            params.append(TRAINING_AGENT)
        if not conditions:
            return "true", []
        return (
            f"({alias}.trajectory_id in (select st.trajectory_id from trajectories st "
            f"left join runs sr on sr.run_id = st.run_id left join tasks sk on sk.task_id = st.task_id "
            f"where {' and '.join(conditions)}))"
        ), params


EVERYTHING = Scope(kind="all")
"""A scope with no filter."""


def read_from(
    path: str | Path, read: Callable[..., Any], *, wait_s: float | None = None, **kwargs: Any
) -> tuple[Any, bool]:
    """Open the store at `path` read-only for one read: `read(store, **kwargs)` (a function of this
    module, or another read such as `difficulty.held_out_check`), and whether opening had to wait for
    a writer (what was read may then be partial). A missing store is StoreMissing, a held one
    StoreBusy once `wait_s` has passed."""
    with Store(path, read_only=True, create=False, wait_s=wait_s) as store:
        return read(store, **kwargs), store.waited_for_writer


def select_from(
    path: str | Path,
    sql: str,
    *,
    max_rows: int | None = None,
    timeout_s: float | None = None,
    wait_s: float | None = None,
) -> QueryResult:
    """One SELECT from outside (an analyst's console) on a sealed, read-only open of `path`: no
    files, network, extensions or settings; anything else is QueryRejected."""
    with Store(path, read_only=True, create=False, sealed=True, wait_s=wait_s) as store:
        return store.query_one_select(sql, max_rows=max_rows, timeout_s=timeout_s)


class SqlRead:
    """A read that is one SQL statement. The decorated function takes the store and filters and
    returns the statement and its parameters; called, the read returns a DataFrame, and
    `.records(store, ...)` returns the same rows as plain dicts straight from DuckDB, without pandas
    (importing it and building frames cost a report process ~0.4 s of ~1.8 s at 50k attempts).
    Integer columns with NULLs come back as ints there, where a frame holds floats."""

    def __init__(self, build: Callable[..., tuple[str, list[Any]]]):
        functools.update_wrapper(self, build)
        self._build = build

    def __call__(self, store: Store, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return store.frame(*self._build(store, *args, **kwargs))

    def records(self, store: Store, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return _as_dicts(*store.query(*self.statement(store, *args, **kwargs)))

    def statement(self, store: Store, *args: Any, **kwargs: Any) -> tuple[str, list[Any]]:
        """The SQL and parameters this read runs with these filters (for `records_together`)."""
        return self._build(store, *args, **kwargs)


def records_together(store: Store, reads: dict[str, tuple[SqlRead, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """`read.records(store, **filters)` for each named (read, filters), run side by side
    (`Store.query_many`): the report's two dozen small reads take about half as long on two cores."""
    names = list(reads)
    results = store.query_many([read.statement(store, **filters) for read, filters in reads.values()])
    return {name: _as_dicts(*result) for name, result in zip(names, results)}


def _as_dicts(columns: list[str], rows: list[tuple]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in rows]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame's rows as plain dicts: numpy scalars and arrays as Python values, missing as None."""
    names = [str(name) for name in frame.columns]
    columns = [[_plain(v) for v in frame.iloc[:, k].tolist()] for k in range(len(names))]  # by column: 3x faster
    return [dict(zip(names, row)) for row in zip(*columns)]


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalars and arrays (list columns)
    if isinstance(value, (list, dict, str)) or value is None:
        return value
    import pandas as pd

    return None if pd.isna(value) else value


def _where(columns: dict[str, str], *, after_where: bool = False, **filters: Any) -> tuple[str, list[Any]]:
    """` where a = ? and b = ?` for the filters that are set (` and a = ? ...` with `after_where`,
    for a query that already has a condition); `columns` maps filter to column."""
    clauses, params = [], []
    for name, value in filters.items():
        if value is None:
            continue
        if name not in columns:
            raise TypeError(f"unknown filter {name!r}; this query takes {', '.join(sorted(columns))}")
        clauses.append(f"{columns[name]} = ?")
        params.append(value)
    lead = " and " if after_where else " where "
    return (lead + " and ".join(clauses) if clauses else ""), params


def _and_scope(where: str, params: list[Any], scope: Scope | None, alias: str) -> tuple[str, list[Any]]:
    """`where` (from `_where`) narrowed to `scope`'s attempts."""
    if scope is None:
        return where, params
    clause, extra = scope.clause(alias)
    if clause == "true":
        return where, params
    return (f"{where} and {clause}" if where else f" where {clause}"), [*params, *extra]


_SYSTEM = "coalesce(r.agent, '(unknown)') || ' · ' || {model}"
"""A system's display name: agent · model (the unit a leaderboard compares)."""


_ATTEMPT_FILTERS = {
    "model": "a.model",
    "run_id": "t.run_id",
    "task_id": "a.task_id",
    "task_type": "a.task_type",
    "language": "a.language",
    "tier": "a.tier",
    "outcome": "a.outcome",
}


def attempts(
    store: Store,
    *,
    model: str | None = None,
    run_id: str | None = None,
    task_id: str | None = None,
    task_type: str | None = None,
    language: str | None = None,
    tier: str | None = None,
    outcome: str | None = None,
    scope: Scope | None = None,
) -> pd.DataFrame:
    """One row per attempt with a verdict.

    Columns: trajectory_id, run_id, agent, model, model_raw, task_id, attempt, outcome (passed /
    failed / error), harness_error, flagged (a verdict reached despite a harness fault), tier,
    task_type, language, n_steps, actions_logged, input_tokens, output_tokens, cost_usd, system
    (agent · model).
    """
    where, params = _where(
        _ATTEMPT_FILTERS,
        model=model,
        run_id=run_id,
        task_id=task_id,
        task_type=task_type,
        language=language,
        tier=tier,
        outcome=outcome,
    )
    where, params = _and_scope(where, params, scope, "a")
    return store.frame(
        f"""
        select a.trajectory_id, t.run_id, r.agent, a.model, t.model_raw, a.task_id, a.attempt, a.outcome,
               a.harness_error, a.flagged, a.tier, a.task_type, a.language, t.n_steps, t.actions_logged,
               t.input_tokens, t.output_tokens, t.cost_usd, {_SYSTEM.format(model="a.model")} as system
        from v_attempts a join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
        {where} order by a.model, a.task_id, a.attempt, a.trajectory_id""",
        params,
    )


@SqlRead
def pass_rates(store: Store, *, slice: str = "overall", model: str | None = None) -> pd.DataFrame:
    """Pass rates per model and slice value.

    Columns: model, dimension, value, attempts (passed + failed), passes, pass_rate, ci_low,
    ci_high (Wilson 95%), harness_errors (no verdict, not in attempts), flagged (counted
    verdicts reached despite a harness fault).
    """
    if slice not in SLICES:
        raise ValueError(f"slice {slice!r} is not one of {', '.join(SLICES)}")
    where, params = _where({"model": "model", "dimension": "dimension"}, dimension=slice, model=model)
    return (f"select * from v_pass_rates{where} order by model, value", params)


def authored_tier_pass_rates(store: Store, *, scope: Scope | None = None) -> pd.DataFrame:
    """Pass rate per authored tier over the scope's attempts, best first.

    Columns: tier (`(none)` for tasks without one), attempts (with a verdict), passes, pass_rate,
    ci_low, ci_high (Wilson 95%), harness_errors (no verdict, not in attempts).
    """
    where, params = _and_scope("", [], scope, "a")
    return store.frame(
        f"""
        select tier, count(*) filter (outcome <> 'error') as attempts, count(*) filter (outcome = 'passed') as passes,
               count(*) filter (outcome = 'passed') / nullif(count(*) filter (outcome <> 'error'), 0) as pass_rate,
               wilson_low(count(*) filter (outcome = 'passed'), count(*) filter (outcome <> 'error')) as ci_low,
               wilson_high(count(*) filter (outcome = 'passed'), count(*) filter (outcome <> 'error')) as ci_high,
               count(*) filter (outcome = 'error') as harness_errors
        from v_attempts a{where} group by tier order by pass_rate desc nulls last, tier""",
        params,
    )


@SqlRead
def task_cells(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """Per model and task: passes and attempts with a verdict (the unit a cluster bootstrap resamples).

    Columns: model, task_id, passes, attempts.
    """
    where, params = _where({"model": "model"}, model=model)
    return (
        f"""select model, task_id, count(*) filter (outcome = 'passed') as passes,
                       count(*) filter (outcome <> 'error') as attempts
                from v_attempts{where} group by all order by all""",
        params,
    )


@SqlRead
def failure_distribution(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    dimension: str | tuple[str, ...] = "overall",
    taxonomy_version: str | None = None,
    scope: Scope | None = None,
) -> pd.DataFrame:
    """How each model's failures split across codes, over the failures the coder could judge.

    Columns: coder, taxonomy_version, model, code, dimension, value, n (failures with the code),
    applied (failures the coder could judge), failures, share (n / applied), coverage
    (applied / failures), ci_low, ci_high (Wilson 95% of share). `taxonomy_version` defaults to
    the newest the coder used. `dimension`: overall, tier or task_type, or a tuple of them (one
    read for several; each dimension's rows keep their order).

    With a `scope`, the split is per system over the scope's failures (dimension `overall`), with
    two more columns, agent and system (agent · model), and harness_failure kept among the codes.
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    if scope is not None:
        if dimension != "overall":
            raise ValueError(
                "a scoped failure distribution is overall only; narrow the scope by tier or task type instead"
            )
        clause, scope_params = scope.clause("a")
        where, params = _where({"model": "a.model"}, after_where=True, model=model)
        return (
            f"""
            with failed as (
                select a.trajectory_id, a.model, coalesce(r.agent, '(unknown)') as agent,
                       {_SYSTEM.format(model="a.model")} as system
                from v_attempts a join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
                where a.outcome = 'failed' and {clause} {where}),
            totals as (select system, count(*) as failures from failed group by 1),
            counted as (
                select c.coder, c.taxonomy_version, f.agent, f.model, f.system, c.code,
                       count(*) filter (c.status = 'present') as n,
                       count(*) filter (c.status <> 'not_applicable') as applied, any_value(tot.failures) as failures
                from failed f join coding_status c using (trajectory_id) join totals tot using (system)
                where c.coder = ? and c.taxonomy_version = ? group by all)
            select coder, taxonomy_version, agent, model, system, code, 'overall' as dimension, 'all' as value, n, applied,
                   failures, n / nullif(applied, 0) as share, applied / failures as coverage,
                   case when applied > 0 then wilson_low(n, applied) end as ci_low,
                   case when applied > 0 then wilson_high(n, applied) end as ci_high
            from counted order by system, share desc nulls last, code""",
            [*scope_params, *params, coder, version],
        )
    dimensions = [dimension] if isinstance(dimension, str) else list(dimension)
    where, params = _where(
        {"coder": "coder", "version": "taxonomy_version", "model": "model"}, coder=coder, version=version, model=model
    )
    where += f"{' and' if where else ' where'} list_contains(?, dimension)"
    return (
        f"select * from v_failure_distribution{where} order by model, share desc nulls last, code, dimension, value",
        [*params, dimensions],
    )


@SqlRead
def failure_cells(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None
) -> pd.DataFrame:
    """Per model, code and task: failures with the code (present) and failures judged (applied).

    Columns: model, code, task_id, present, applied.
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where(
        {"coder": "c.coder", "version": "c.taxonomy_version", "model": "t.model"},
        after_where=True,
        coder=coder,
        version=version,
        model=model,
    )
    return (
        f"""
        select t.model, c.code, t.task_id, count(*) filter (c.status = 'present') as present,
               count(*) filter (c.status <> 'not_applicable') as applied
        from coding_status c join v_attempts t using (trajectory_id)
        where t.outcome = 'failed' and c.code <> 'harness_failure' {where}
        group by all order by all""",
        params,
    )


@SqlRead
def failure_clusters(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None
) -> pd.DataFrame:
    """`failure_cells` as one row per model and code: its tasks' counts as lists in task order (the
    clusters a bootstrap resamples), a row per interval rather than per task.

    Columns: model, code, present (list), applied (list).
    """
    cells, params = failure_cells.statement(store, coder, model=model, taxonomy_version=taxonomy_version)
    return (
        f"""select model, code, list(present order by task_id) as present, list(applied order by task_id) as applied
                from ({cells}) group by all order by all""",
        params,
    )


@SqlRead
def coder_coverage(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    taxonomy_version: str | None = None,
    scope: Scope | None = None,
) -> pd.DataFrame:
    """Per model: failed attempts, how many the coder could judge, and the commonest reason it could not.

    Columns: model, failures, coded_failures, why_not_coded.
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "model"}, model=model)
    clause, scope_params = (scope or EVERYTHING).clause("a")
    return (
        f"""
        with failed as (select trajectory_id, model from v_attempts a where outcome = 'failed' and {clause}),
        judged as (select trajectory_id, bool_or(status <> 'not_applicable') as judged,
                          mode(reason) filter (status = 'not_applicable') as why_not
                   from coding_status where coder = ? and taxonomy_version = ? and code <> 'harness_failure' group by 1)
        select * from (
            select f.model, count(*) as failures, count(*) filter (j.judged) as coded_failures,
                   mode(coalesce(j.why_not, 'not coded')) filter (not coalesce(j.judged, false)) as why_not_coded
            from failed f left join judged j using (trajectory_id) group by 1){where} order by 1""",
        [*scope_params, coder, version, *params],
    )


def latest_taxonomy_version(store: Store, coder: str) -> str | None:
    """The newest taxonomy version `coder` has coded under, or None if it never ran."""
    _, rows = store.query("select max(taxonomy_version) from coding_status where coder = ?", [coder])
    return None if rows[0][0] is None else str(rows[0][0])


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


def _models_in(scope: Scope | None, where: str, params: list[Any]) -> tuple[str, list[Any]]:
    """`where` narrowed to the models with attempts in `scope`."""
    if scope is None or not scope.active():
        return where, params
    clause, extra = scope.clause("a")
    condition = f"model in (select a.model from trajectories a where {clause})"
    return (f"{where} and {condition}" if where else f" where {condition}"), [*params, *extra]


@SqlRead
def model_abilities(store: Store, *, model: str | None = None, scope: Scope | None = None) -> pd.DataFrame:
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

    Keys: fitted (attempts the fit used), current (attempts with a verdict now). They differ when
    the store changed since the last fit; `curriculab difficulty` or `report --refit` refits.
    """
    _, rows = store.query("""select (select coalesce(sum(n_attempts), 0) from irt_tasks),
                                    (select count(*) from trajectories where outcome in ('passed', 'failed'))""")
    return {"fitted": int(rows[0][0]), "current": int(rows[0][1])}


@SqlRead
def code_reliability(store: Store, coder: str | None = None, *, taxonomy_version: str | None = None) -> pd.DataFrame:
    """Whether each code from each coder may be relied on, per annotator.

    Columns: coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable,
    in_sample (a classifier measured on its own training labels), computed_at, method (labels:
    measured against an annotator; verifier: exact by construction).
    """
    where, params = _where({"coder": "coder", "version": "taxonomy_version"}, coder=coder, version=taxonomy_version)
    return (f"select * from code_reliability{where} order by coder, code, annotator", params)


def coder_agreement(store: Store, coder: str | None = None, *, annotator: str | None = None) -> pd.DataFrame:
    """Coder-vs-annotator agreement as last measured (`curriculab agreement`).

    Columns: coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable, computed_at.
    """
    where, params = _where({"coder": "coder", "annotator": "annotator"}, coder=coder, annotator=annotator)
    return store.frame(f"select * from v_coder_agreement{where} order by coder, annotator, code", params)


@SqlRead
def milestone_funnel(
    store: Store, *, model: str | None = None, task_type: str | None = None, scope: Scope | None = None
) -> pd.DataFrame:
    """Where milestone-graded attempts stop.

    Columns: model, task_type, milestones_total, first_failed_milestone (1-based; NULL when every
    milestone passed), attempts.
    """
    where, params = _where({"model": "model", "task_type": "task_type"}, model=model, task_type=task_type)
    if scope is None:
        return (
            f"select * from v_milestone_funnel{where} order by model, task_type, milestones_total, "
            "first_failed_milestone nulls last",
            params,
        )
    clause, scope_params = scope.clause("t")
    return (
        f"""
        select * from (
            select t.model, coalesce(k.task_type, '(none)') as task_type, t.milestones_total,
                   case when t.milestones_passed < t.milestones_total then t.milestones_passed + 1 end as first_failed_milestone,
                   count(*) as attempts
            from trajectories t left join tasks k using (task_id)
            where t.milestones_total > 0 and t.outcome <> 'error' and {clause} group by all){where}
        order by model, task_type, milestones_total, first_failed_milestone nulls last""",
        [*scope_params, *params],
    )


def milestone_stages(funnel: pd.DataFrame) -> pd.DataFrame:
    """A funnel per model from `milestone_funnel` rows: for each milestone k, the attempts on tasks
    with at least k milestones that reached it and that passed it.

    Columns: model, milestone, reached, passed, share_of_reached (passed / reached), share_of_first
    (passed / the attempts that reached milestone 1). An attempt on a 3-milestone task never counts
    toward milestone 4.
    """
    rows = []
    for model, part in funnel.groupby("model", sort=True):
        first = None
        for k in range(1, int(part["milestones_total"].max()) + 1):
            eligible = part[part["milestones_total"] >= k]
            failed_at = eligible["first_failed_milestone"]
            reached = int(eligible[failed_at.isna() | (failed_at >= k)]["attempts"].sum())
            passed = int(eligible[failed_at.isna() | (failed_at > k)]["attempts"].sum())
            first = reached if first is None else first
            rows.append(
                {
                    "model": model,
                    "milestone": k,
                    "reached": reached,
                    "passed": passed,
                    "share_of_reached": passed / reached if reached else None,
                    "share_of_first": passed / first if first else None,
                }
            )
    import pandas as pd

    return pd.DataFrame(rows, columns=["model", "milestone", "reached", "passed", "share_of_reached", "share_of_first"])


def test_failure_rates(store: Store, *, model: str | None = None, tier: str | None = None) -> pd.DataFrame:
    """Per task (problem) and test tier: how often its tests fail, for retiering.

    Columns: task_id, tier, tests, results, failures, failure_rate.
    """
    where, params = _where({"model": "t.model", "tier": "r.tier"}, model=model, tier=tier)
    return store.frame(
        f"""
        select t.task_id, r.tier, count(distinct r.test_id) as tests, count(*) as results,
               count(*) filter (not r.passed) as failures, count(*) filter (not r.passed) / count(*) as failure_rate
        from test_results r join trajectories t using (trajectory_id){where}
        group by all order by t.task_id, r.tier nulls last""",
        params,
    )


test_failure_rates.__test__ = False  # a query, not a pytest test


def trajectory(store: Store, trajectory_id: str) -> pd.DataFrame:
    """One trajectory's steps, each with the codes that cite it as evidence.

    Columns: step_idx, source, action, tool_name, path, command, message, output, exit_code,
    error_observed, output_truncated, edit_raw (an edit step's source record as JSON, where its
    content or old/new strings live), codes (list of `coder:code` citing this step).
    """
    frame = store.frame(
        """
        select s.step_idx, s.source, s.action, s.tool_name, s.path, s.command, s.message, s.output, s.exit_code,
               s.error_observed, s.output_truncated, case when s.action = 'edit' then s.raw::varchar end as edit_raw,
               coalesce((select list(f.coder || ':' || f.code order by f.coder, f.code) from failure_codes f
                         where f.trajectory_id = s.trajectory_id and list_contains(f.evidence_steps, s.step_idx)),
                        []) as codes
        from steps s where s.trajectory_id = ? order by s.step_idx""",
        [trajectory_id],
    )
    if (
        frame.empty
        and store.frame("select count(*) as n from trajectories where trajectory_id = ?", [trajectory_id])["n"].iloc[0]
        == 0
    ):
        raise ValueError(
            f"no trajectory {trajectory_id!r} in the store. "
            'List them with `curriculab query "select trajectory_id from trajectories"`'
        )
    return frame


def plans(store: Store, *, target_model: str | None = None) -> pd.DataFrame:
    """Stored curriculum plans, newest first.

    Columns: plan_id, created_at, target_model, strategy, allocation, weights, task_mix, reasons, config_yaml
    (the plan.yaml text), plan (the whole plan as JSON).
    """
    where, params = _where({"target_model": "target_model"}, target_model=target_model)
    return store.frame(f"select * from plans{where} order by created_at desc", params)


def training_curves(store: Store, *, run_id: str | None = None, name: str | None = None) -> pd.DataFrame:
    """Training metrics per logging step (loss, kl, reward, pass_rate/<tier>, alpha/<tier>).

    Columns: run_id, step, name, value. Empty until a training run has logged.
    """
    where, params = _where({"run_id": "run_id", "name": "name"}, run_id=run_id, name=name)
    return store.frame(
        f"select run_id, step, name, value from training_metrics{where} order by run_id, name, step", params
    )


@SqlRead
def training_runs(store: Store, *, run_id: str | None = None) -> pd.DataFrame:
    """Per GRPO training run (agent `curriculab-grpo`): what it generated and how it went.

    Columns: run_id, model (the base model), rollout_models (the store names of its rollouts,
    e.g. `<M>@round2`), rollouts, failed, passed, pass_rate (every test passed), mean_reward,
    steps (logged), zero_std_share (mean `frac_reward_zero_std`: groups with no gradient),
    final_reward (the last logged step's mean reward).
    """
    where, params = _where({"run_id": "r.run_id"}, after_where=True, run_id=run_id)
    return (
        f"""
        with rollouts as (
            select t.run_id, string_agg(distinct t.model, ', ' order by t.model) as rollout_models, count(*) as rollouts,
                   count(*) filter (t.outcome = 'failed') as failed, count(*) filter (t.outcome = 'passed') as passed,
                   avg(t.reward) as mean_reward
            from trajectories t group by 1),
        metrics as (
            select run_id, count(distinct step) as steps,
                   avg(value) filter (name = 'frac_reward_zero_std') as zero_std_share,
                   arg_max(value, step) filter (name = 'reward') as final_reward
            from training_metrics group by 1)
        select r.run_id, r.model, o.rollout_models, o.rollouts, o.failed, o.passed,
               o.passed / nullif(o.passed + o.failed, 0) as pass_rate, o.mean_reward, m.steps, m.zero_std_share,
               m.final_reward
        from runs r join rollouts o using (run_id) left join metrics m using (run_id)
        where r.agent = ? {where}
        order by r.started_at nulls last, r.run_id""",
        [TRAINING_AGENT, *params],
    )


@SqlRead
def rollout_codes(store: Store, *, run_id: str | None = None) -> pd.DataFrame:
    """The verifier's failure codes over each training run's failed rollouts.

    Columns: run_id, code, n (failed rollouts with it), failures (failed rollouts judged),
    share, ci_low, ci_high (Wilson 95%). Codes present at least once, largest share first.
    """
    where, params = _where({"run_id": "t.run_id"}, after_where=True, run_id=run_id)
    return (
        f"""
        select t.run_id, c.code, count(*) filter (c.status = 'present') as n,
               count(*) filter (c.status <> 'not_applicable') as failures,
               n / nullif(failures, 0) as share, wilson_low(n, failures) as ci_low, wilson_high(n, failures) as ci_high
        from coding_status c join trajectories t using (trajectory_id) join runs r on r.run_id = t.run_id
        where c.coder = 'verifier' and t.outcome = 'failed' and r.agent = ? {where}
        group by all having n > 0 order by t.run_id, share desc, c.code""",
        [TRAINING_AGENT, *params],
    )


@SqlRead
def failed_code_sets(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None
) -> pd.DataFrame:
    """Per failed attempt the coder found anything in: the set of its codes (harness_failure aside).

    Columns: trajectory_id, model, codes (list).
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "t.model"}, after_where=True, model=model)
    return (
        f"""
        select f.trajectory_id, any_value(t.model) as model, list(distinct f.code order by f.code) as codes
        from failure_codes f join trajectories t using (trajectory_id)
        where f.coder = ? and f.taxonomy_version = ? and t.outcome = 'failed' and f.code <> 'harness_failure'
        {where} group by 1 order by 1""",
        [coder, version, *params],
    )


@SqlRead
def failure_code_pairs(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None, top: int = 10
) -> pd.DataFrame:
    """The `top` pairs of codes found together on the failed attempts of `failed_code_sets`, most
    frequent first (ties: the pair met first in trajectory order, then by name).

    Columns: code_a, code_b (code_a < code_b), n (attempts with both), lift (n × attempts with any
    code / (attempts with code_a × attempts with code_b)).
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "t.model"}, after_where=True, model=model)
    return (
        f"""
        with found as (
            select distinct f.trajectory_id, f.code from failure_codes f join trajectories t using (trajectory_id)
            where f.coder = ? and f.taxonomy_version = ? and t.outcome = 'failed' and f.code <> 'harness_failure' {where}),
        single as (select code, count(*) as n from found group by 1),
        pairs as (
            select x.code as code_a, y.code as code_b, count(*) as n, min(x.trajectory_id) as first_seen
            from found x join found y on x.trajectory_id = y.trajectory_id and x.code < y.code group by all)
        select p.code_a, p.code_b, p.n,
               (p.n * (select count(distinct trajectory_id) from found))::double / (a.n * b.n)::double as lift
        from pairs p join single a on a.code = p.code_a join single b on b.code = p.code_b
        order by p.n desc, p.first_seen, p.code_a, p.code_b limit ?""",
        [coder, version, *params, top],
    )


@SqlRead
def harness_errors(store: Store, *, model: str | None = None, scope: Scope | None = None) -> pd.DataFrame:
    """Attempts whose record names a harness error, by error and by what it means for the attempt:
    one definition of "harness" everywhere (the README's Outcomes policy, taxonomy v4's
    `harness_failure`): an infrastructure fault leaves no verdict and is outside pass rates; an
    agent's own fault (a timeout, a crash) is the agent's failure and counts; any other fault with a
    verdict keeps the verdict, flagged.

    Columns: model, harness_error (`unnamed` where a record with no verdict named none), verdict
    (`none: infrastructure fault (left out)`, `<outcome>
    (agent's fault, counted)` or `<outcome> (stands, flagged)`), attempts.
    """
    where, params = _where({"model": "model"}, after_where=True, model=model)
    clause, scope_params = (scope or EVERYTHING).clause("t")
    return (
        f"""
        select model, coalesce(harness_error, 'unnamed') as harness_error,
               case when outcome = 'error' then '{INFRASTRUCTURE_FAULT}'
                    when list_contains(?, harness_error) then outcome || ' (agent''s fault, counted)'
                    else outcome || ' (stands, flagged)' end as verdict,
               count(*) as attempts
        from trajectories t where (harness_error is not null or outcome = 'error') and {clause} {where}
        group by all order by all""",
        [sorted(AGENT_FAULTS), *scope_params, *params],
    )


INFRASTRUCTURE_FAULT = "none: infrastructure fault (left out)"
"""`harness_errors.verdict` of an attempt the infrastructure failed (outcome `error`)."""


@SqlRead
def unknown_models(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """Attempts whose source named no model, and what they are reported as.

    Columns: attributed_to, attempts, runs.
    """
    where, params = _where({"model": "model"}, after_where=True, model=model)
    return (
        f"""select model as attributed_to, count(*) as attempts, count(distinct run_id) as runs
                           from trajectories where model_raw is null {where}
                           group by 1 order by 1""",
        params,
    )


@SqlRead
def systems(store: Store, *, model: str | None = None, scope: Scope | None = None) -> pd.DataFrame:
    """Pass rates per system (agent, agent version, model), the unit a leaderboard compares, in the
    leaderboard's own order (its figure, `leaderboard_accuracy`, best first; the judged pass rate breaks ties).

    Columns: agent, agent_version, model, runs, trials (every attempt), attempts (with a verdict),
    passes, pass_rate (over attempts), ci_low, ci_high (Wilson 95% of pass_rate), errors (no
    verdict), leaderboard_accuracy (every trial counts and an error is a failure, averaged over
    runs: the figure Terminal-Bench publishes).
    """
    where, params = _where({"model": "t.model"}, model=model)
    where, params = _and_scope(where, params, scope, "t")
    return (
        f"""
        with per_run as (
            select coalesce(r.agent, '(unknown)') as agent, coalesce(r.agent_version, '') as agent_version, t.model,
                   t.run_id, count(*) as trials, count(*) filter (t.outcome <> 'error') as attempts,
                   count(*) filter (t.outcome = 'passed') as passes, count(*) filter (t.outcome = 'error') as errors
            from trajectories t left join runs r on r.run_id = t.run_id{where} group by all)
        select agent, agent_version, model, count(*) as runs, sum(trials)::bigint as trials, sum(attempts)::bigint as attempts,
               sum(passes)::bigint as passes, sum(passes) / nullif(sum(attempts), 0) as pass_rate,
               wilson_low(sum(passes)::bigint, sum(attempts)::bigint) as ci_low,
               wilson_high(sum(passes)::bigint, sum(attempts)::bigint) as ci_high, sum(errors)::bigint as errors,
               avg(passes / trials) as leaderboard_accuracy
        from per_run group by all
        order by leaderboard_accuracy desc nulls last, pass_rate desc nulls last, agent, model""",
        params,
    )


@SqlRead
def model_pooling(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """What each model row pools: its agents and runs (a row of one model may mix systems).

    Columns: model, agents (count), agent_names (comma-separated), runs (count), run_ids (the first
    five, comma-separated), unknown_model (whether the source named no model for it).
    """
    where, params = _where({"model": "t.model"}, model=model)
    return (
        f"""
        select t.model, count(distinct coalesce(r.agent, '(unknown)')) as agents,
               string_agg(distinct coalesce(r.agent, '(unknown)'), ', ' order by coalesce(r.agent, '(unknown)')) as agent_names,
               count(distinct t.run_id) as runs,
               array_to_string(list_slice(list(distinct t.run_id order by t.run_id), 1, 5), ', ') as run_ids,
               bool_or(t.model_raw is null) as unknown_model
        from trajectories t left join runs r on r.run_id = t.run_id{where} group by all order by 1""",
        params,
    )


def pooling_concern(row: dict[str, Any]) -> tuple[str, str] | None:
    """(what is pooled, "agents" or "unnamed") for a `model_pooling` row whose numbers mix systems
    (several agents) or maybe models (several runs that named none); None when the row is one system."""
    if row["agents"] > 1:
        return f"{row['model']} pools {row['agents']} agents ({row['agent_names']}) over {row['runs']} runs", "agents"
    if row["unknown_model"] and row["runs"] > 1:
        return f"{row['model']} pools {row['runs']} runs whose files name no model ({row['run_ids']})", "unnamed"
    return None


@SqlRead
def attempt_evidence(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """Per model: what the coders could see.

    Columns: model, attempts, without_actions (no logged agent action), failures_without_actions,
    installed_agent (actions not logged), steps_lost_on_ingest (trajectory missing or unreadable),
    tasks, attempts_per_task.
    """
    where, params = _where({"model": "t.model"}, model=model)
    return (
        f"""
        select t.model, count(*) as attempts,
               count(*) filter (not a.acted) as without_actions,
               count(*) filter (not a.acted and t.outcome = 'failed') as failures_without_actions,
               count(*) filter (not coalesce(t.actions_logged, true)) as installed_agent,
               count(*) filter (w.trajectory_id is not null) as steps_lost_on_ingest,
               count(distinct t.task_id) as tasks, count(*) / count(distinct t.task_id) as attempts_per_task
        from trajectories t
        join (select trajectory_id, coalesce(actions_logged, true) and trajectory_id in (
                  select trajectory_id from steps where source = 'agent' and action is not null and action <> 'message')
                  as acted from trajectories) a using (trajectory_id)
        left join (select distinct record as trajectory_id from ingest_errors where severity = 'warning'
                   and reason like '%without steps%') w using (trajectory_id)
        {where} group by 1 order by 1""",
        params,
    )


@SqlRead
def quarantined_inputs(store: Store) -> pd.DataFrame:
    """Inputs refused at ingest, per source format. Columns: source_format, inputs."""
    return (
        """select coalesce(source_format, '(unknown)') as source_format, count(*) as inputs
                          from ingest_errors where severity = 'error' group by 1 order by 1""",
        [],
    )


@SqlRead
def tier_calibration(store: Store) -> pd.DataFrame:
    """Authored tier × measured tier, in tasks. Columns: tier_authored, measured_tier, tasks."""
    return (
        """select tier_authored, measured_tier, count(*) as tasks from v_task_difficulty
                          where tier_authored is not null group by all order by all""",
        [],
    )


@SqlRead
def misplaced_tasks(store: Store, limit: int = 15) -> pd.DataFrame:
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
def signal_efficiency(
    store: Store, band: tuple[float, float] = (0.2, 0.8), *, model: str | None = None
) -> pd.DataFrame:
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


@SqlRead
def attempt_cells(store: Store, *, train_only: bool = False) -> pd.DataFrame:
    """Per model and task: attempts with a verdict and passes, for the IRT fit. With `train_only`,
    each (model, task)'s last attempt is left out when it tried more than once (held out).

    Columns: model, task_id, n, k.
    """
    return (
        f"""select model, task_id, count(*) as n, count(*) filter (passed) as k from ({_ATTEMPTS_SQL})
                           {"where not held_out" if train_only else ""} group by 1, 2 order by 1, 2""",
        [],
    )


@SqlRead
def held_out_attempts(store: Store) -> pd.DataFrame:
    """Each (model, task)'s last attempt where it tried more than once. Columns: model, task_id, passed."""
    return (f"select model, task_id, passed from ({_ATTEMPTS_SQL}) where held_out order by 1, 2", [])


@SqlRead
def stored_held_out(store: Store) -> pd.DataFrame:
    """The held-out check stored with the last fit (`difficulty.held_out_check`; none where nothing
    could be held out). Columns: held_out, irt_log_loss, baseline_log_loss, irt_auc, baseline_auc."""
    return "select held_out, irt_log_loss, baseline_log_loss, irt_auc, baseline_auc from irt_checks", []


def authored_tier_counts(store: Store) -> dict[str, int]:
    """Attempted tasks per authored tier (basic, intermediate, complex)."""
    frame = store.frame("""select tier_authored, count(*) as n from tasks where tier_authored in ('basic', 'intermediate', 'complex')
                           and task_id in (select task_id from trajectories) group by 1""")
    return dict(zip(frame["tier_authored"], frame["n"].astype(int)))


# Each (model, task)'s last attempt is held out when it tried more than once (held_out_check).
_ATTEMPTS_SQL = """
select model, task_id, outcome = 'passed' as passed,
       row_number() over (partition by model, task_id order by attempt desc nulls last, trajectory_id desc) = 1
       and count(*) over (partition by model, task_id) > 1 as held_out
from trajectories where outcome in ('passed', 'failed') and model is not null
"""


def selected_trajectories(store: Store, where: str | None = None) -> pd.DataFrame:
    """The trajectories matching `where` (one filter expression on `trajectories`, checked to be
    no more than that). Columns: trajectory_id, task_id, outcome, harness_error, actions_logged."""
    if where:
        check_filter(store, where)
    return store.frame(f"""select trajectory_id, task_id, outcome, harness_error, coalesce(actions_logged, true) as actions_logged
                           from trajectories where trajectory_id in (select trajectory_id from trajectories where ({where or "true"}))
                           order by trajectory_id""")


def steps_of(store: Store, trajectory_ids: list[str]) -> pd.DataFrame:
    """The steps of the given trajectories, in order. Columns: trajectory_id, step_idx, source,
    action, tool_name, path, command, message, output, output_truncated, exit_code."""
    return store.frame(
        """select trajectory_id, step_idx, source, action, tool_name, path, command, message, output,
                                 output_truncated, exit_code
                          from steps where list_contains(?, trajectory_id) order by trajectory_id, step_idx""",
        [list(trajectory_ids)],
    )


def verifier_evidence(
    store: Store, where: str | None = None, *, run_id: str | None = None, uncoded_by: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the verifier coder reads, for the trajectories matching `where` (a filter on
    `trajectories`), of one run, and/or not yet coded by `uncoded_by`.

    Returns (trajectories, tests). trajectories: trajectory_id, outcome, harness_error,
    completion_step (the step index of a single-turn completion, else NULL), completion (its
    text), finish_reason, entry_point. tests: trajectory_id, test_id, tier, passed, status, detail.
    """
    if where:
        check_filter(store, where)
    narrower, params = "", []
    if run_id is not None:
        narrower, params = narrower + " and t.run_id = ?", params + [run_id]
    if uncoded_by is not None:
        narrower += (
            " and not exists (select 1 from coding_status c where c.trajectory_id = t.trajectory_id and c.coder = ?)"
        )
        params.append(uncoded_by)
    chosen = store.frame(
        f"""
        select t.trajectory_id, t.outcome, t.harness_error, s.step_idx as completion_step, s.message as completion,
               json_extract_string(s.raw, '$.completion.finish_reason') as finish_reason,
               json_extract_string(s.raw, '$.completion.entry_point') as entry_point
        from trajectories t
        left join steps s on s.trajectory_id = t.trajectory_id and s.source = 'agent'
             and json_exists(s.raw, '$.completion')
        where t.trajectory_id in (select trajectory_id from trajectories where ({where or "true"})){narrower}
        order by t.trajectory_id""",
        params,
    )
    tests = store.frame(
        """select trajectory_id, test_id, tier, passed, status, detail from test_results
                           where list_contains(?, trajectory_id) order by trajectory_id, test_id""",
        [list(chosen["trajectory_id"])],
    )
    return chosen, tests


def ingest_manifest(store: Store, under: list[str]) -> pd.DataFrame:
    """Inputs read cleanly before, at or under the given absolute paths.

    Columns: path, signature, kind, trajectories, seen_at.
    """
    return store.frame(MANIFEST_UNDER.format(columns="*"), [list(under), list(under)])


MANIFEST_UNDER = """select {columns} from ingest_manifest m
                    where list_contains(?, path) or exists (select 1 from unnest(?) as u(root)
                                                            where starts_with(m.path, u.root || '/'))"""
"""`ingest_manifest`'s SQL (parameters: the roots, twice; `columns` to format in), for callers that
want plain rows of a few columns (a timestamp per row costs more to fetch than the rest)."""


def labels(
    store: Store, *, annotator: str | None = None, taxonomy_version: str | None = None, include_unsure: bool = False
) -> pd.DataFrame:
    """Human labels (an "unsure" label, `present` NULL, only with `include_unsure`).

    Columns: trajectory_id, code, annotator, present, taxonomy_version.
    """
    where, params = _where(
        {"annotator": "annotator", "version": "taxonomy_version"}, annotator=annotator, version=taxonomy_version
    )
    if not include_unsure:
        where += (" and " if where else " where ") + "present is not null"
    return store.frame(
        f"select trajectory_id, code, annotator, present, taxonomy_version from labels{where} "
        "order by trajectory_id, code, annotator",
        params,
    )


def trajectory_ids(store: Store) -> set[str]:
    """Every stored trajectory id."""
    return set(store.frame("select trajectory_id from trajectories")["trajectory_id"])


def coded_for_labelling(store: Store, coder: str, taxonomy_version: str) -> pd.DataFrame:
    """Every (trajectory, code) the coder judged, to sample for labelling.

    Columns: trajectory_id, model, task_id, outcome, code, flagged (the coder found the code).
    """
    return store.frame(
        """select t.trajectory_id, t.model, t.task_id, t.outcome, c.code, c.status = 'present' as flagged
                          from trajectories t join coding_status c using (trajectory_id)
                          where c.coder = ? and c.taxonomy_version = ? and c.status <> 'not_applicable'
                          order by t.trajectory_id, c.code""",
        [coder, taxonomy_version],
    )


def labels_under(store: Store, taxonomy) -> pd.DataFrame:
    """Labels as codes of `taxonomy`: its own, plus those of every older version it maps from, read
    through the mapping chain (`Taxonomy.labels_carried_from`: a code that became exactly one code,
    never redefined, carries its label; a split or redefined code's label is left out). The newest
    label of a (trajectory, code, annotator) wins. An "unsure" label (`present` NULL) is left out: it
    is no judgement to agree with. Columns: trajectory_id, code, annotator, present."""
    import pandas as pd

    frames = []
    for version in [taxonomy.version, *taxonomy.older_versions]:
        carried = taxonomy.labels_carried_from(version)
        frame = store.frame(
            "select trajectory_id, code, annotator, present from labels where taxonomy_version = ? "
            "and present is not null",
            [version],
        )
        kept = frame[frame["code"].isin(carried)]
        frames.append(kept.assign(code=kept["code"].map(carried)))
    every = pd.concat(frames, ignore_index=True)
    return every.drop_duplicates(["trajectory_id", "code", "annotator"], keep="first").reset_index(drop=True)


def coder_label_pairs(store: Store, coder: str, annotator: str, taxonomy, *, in_sample_reason: str) -> pd.DataFrame:
    """Per (trajectory, code) both judged by `coder` (not abstained) and labelled by `annotator`.

    Columns: code, coded (the coder found it), labelled (the annotator did), in_sample (the
    coder's status says it learned from this label).
    """
    coded = store.frame(
        """select trajectory_id, code, status = 'present' as coded, coalesce(reason = ?, false) as in_sample
                           from coding_status where coder = ? and taxonomy_version = ? and status <> 'not_applicable'""",
        [in_sample_reason, coder, taxonomy.version],
    )
    mine = labels_under(store, taxonomy)
    mine = mine[mine["annotator"] == annotator].rename(columns={"present": "labelled"})
    pairs = coded.merge(mine, on=["trajectory_id", "code"])
    return pairs[["code", "coded", "labelled", "in_sample"]]


def fitted_tasks(store: Store) -> pd.DataFrame:
    """The stored IRT fit per task, hardest first. Columns: task_id, difficulty, discrimination,
    difficulty_se, n_attempts, pass_rate, measured_tier."""
    return store.frame("""select task_id, difficulty, discrimination, difficulty_se, n_attempts, pass_rate, measured_tier
                          from irt_tasks order by difficulty desc""")


def test_result_counts(store: Store) -> pd.DataFrame:
    """Per task (problem) and test: failures and runs. Columns: task_id, test_id, failures, runs."""
    return store.frame("""select t.task_id, r.test_id, count(*) filter (not r.passed) as failures, count(*) as runs
                          from test_results r join trajectories t using (trajectory_id) group by 1, 2 order by 1, 2""")


test_result_counts.__test__ = False  # a query, not a pytest test


def model_summary(store: Store) -> pd.DataFrame:
    """Per model: attempts, passed, failed, harness_errors, pass_rate, mean_steps."""
    return store.frame("""
        select model, count(*) as attempts, count(*) filter (outcome = 'passed') as passed,
               count(*) filter (outcome = 'failed') as failed, count(*) filter (outcome = 'error') as harness_errors,
               round(count(*) filter (outcome = 'passed') / nullif(count(*) filter (outcome <> 'error'), 0), 3) as pass_rate,
               round(avg(n_steps), 1) as mean_steps
        from trajectories group by model order by model""")


def action_mix(store: Store) -> pd.DataFrame:
    """Steps per normalised action. Columns: action, steps, share."""
    return store.frame("""select coalesce(action, '(none)') as action, count(*) as steps,
                                 round(count(*) / sum(count(*)) over (), 3) as share
                          from steps group by 1 order by steps desc""")


def authored_tier_summary(store: Store) -> pd.DataFrame:
    """Per authored tier: tasks, attempts, pass_rate. Columns: authored_tier, tasks, attempts, pass_rate."""
    return store.frame("""
        select k.tier_authored as authored_tier, count(distinct k.task_id) as tasks, count(*) as attempts,
               round(count(*) filter (t.outcome = 'passed') / nullif(count(*) filter (t.outcome <> 'error'), 0), 3) as pass_rate
        from trajectories t join tasks k using (task_id) group by 1 order by pass_rate desc""")


def top_code_by_model(store: Store, coder: str = "rules") -> pd.DataFrame:
    """Each model's most frequent code among its failed attempts. Columns: model, code, n."""
    return store.frame(
        """
        select t.model, f.code, count(*) as n from failure_codes f join trajectories t using (trajectory_id)
        where f.coder = ? and t.outcome = 'failed' group by t.model, f.code
        qualify row_number() over (partition by t.model order by count(*) desc, f.code) = 1 order by t.model""",
        [coder],
    )


def tier_pass_rates(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """Per model and test tier: how often its tests pass, with a standard error over trajectories
    (the tests of one attempt are not independent).

    Columns: model, tier, trajectories, results, passes, pass_rate, se.
    """
    where, params = _where({"model": "model"}, model=model)
    return store.frame(
        f"""
        with per_attempt as (
            select t.model, r.tier, r.trajectory_id, count(*) as results, count(*) filter (r.passed) as passes
            from test_results r join trajectories t using (trajectory_id)
            where r.tier is not null and t.outcome <> 'error' group by all)
        select * from (
            select model, tier, count(*) as trajectories, sum(results)::bigint as results, sum(passes)::bigint as passes,
                   sum(passes) / sum(results) as pass_rate,
                   coalesce(stddev_samp(passes / results) / sqrt(count(*)), 0) as se
            from per_attempt group by all){where} order by model, tier""",
        params,
    )


def known_models(store: Store) -> list[str]:
    """Every model with at least one attempt in the store, sorted."""
    return sorted(store.frame("select distinct model from trajectories where model is not null")["model"])


def task_pass_rates(store: Store, *, model: str) -> pd.DataFrame:
    """Per task: the model's attempts with a verdict and passes (a problem's observed pass rate).

    Columns: task_id, attempts, passes.
    """
    return store.frame(
        """select task_id, count(*) filter (outcome <> 'error') as attempts,
                                 count(*) filter (outcome = 'passed') as passes
                          from v_attempts where model = ? group by 1 order by 1""",
        [model],
    )


def store_fingerprint(store: Store) -> dict[str, Any]:
    """What a plan was made from: row counts of the tables it reads and a hash of the trajectories'
    content hashes (the same store content gives the same fingerprint)."""
    frame = store.frame("""
        select (select count(*) from trajectories) as trajectories, (select count(*) from test_results) as test_results,
               (select count(*) from failure_codes) as failure_codes, (select count(*) from code_reliability) as reliability_rows,
               (select coalesce(sum(n_attempts), 0)::bigint from irt_tasks) as irt_attempts,
               (select md5(coalesce(string_agg(content_hash, ',' order by trajectory_id), '')) from trajectories) as content_hash""")
    return records(frame)[0]


def trajectories_with_code(
    store: Store,
    code: str,
    coder: str = "rules",
    *,
    model: str | None = None,
    taxonomy_version: str | None = None,
    limit: int = 500,
    outcome: str | None = None,
    scope: Scope | None = None,
) -> pd.DataFrame:
    """The attempts a coder gave `code`, with its evidence: the drill-down from a failure mode. At
    most `limit` rows; `total` says how many there are in all, so a page never counts the limit.

    Columns: trajectory_id, model, task_id, outcome, confidence, evidence_steps, rationale, total.
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "a.model", "outcome": "a.outcome"}, after_where=True, model=model, outcome=outcome)
    clause, scope_params = (scope or EVERYTHING).clause("a")
    return store.frame(
        f"""
        select f.trajectory_id, a.model, a.task_id, a.outcome, f.confidence, f.evidence_steps, f.rationale,
               count(*) over () as total
        from failure_codes f join v_attempts a using (trajectory_id)
        where f.code = ? and f.coder = ? and f.taxonomy_version = ? and {clause} {where}
        order by a.model, a.task_id, f.trajectory_id limit ?""",
        [code, coder, version, *scope_params, *params, limit],
    )


def trajectory_codes(store: Store, trajectory_id: str) -> pd.DataFrame:
    """Every coder's codes on one trajectory, with evidence steps and rationale.

    Columns: coder, code, taxonomy_version, confidence, evidence_steps, rationale.
    """
    return store.frame(
        """select coder, code, taxonomy_version, confidence, evidence_steps, rationale from failure_codes
                          where trajectory_id = ? order by coder, code""",
        [trajectory_id],
    )


def trajectory_labels(store: Store, trajectory_id: str) -> pd.DataFrame:
    """Human labels on one trajectory. Columns: annotator, code, present, taxonomy_version."""
    return store.frame(
        """select annotator, code, present, taxonomy_version from labels where trajectory_id = ?
                          order by annotator, code""",
        [trajectory_id],
    )


def runs(store: Store) -> pd.DataFrame:
    """Stored runs. Columns: run_id, agent, agent_version, model, dataset, source_format, started_at, attempts."""
    return store.frame("""select r.run_id, r.agent, r.agent_version, r.model, r.dataset, r.source_format, r.started_at,
                                 count(t.trajectory_id) as attempts
                          from runs r left join trajectories t using (run_id) group by all order by r.run_id""")


def code_cooccurrence(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    taxonomy_version: str | None = None,
    scope: Scope | None = None,
) -> pd.DataFrame:
    """How often two codes are found on the same failed attempt.

    Columns: code_a, code_b, attempts (code_a < code_b).
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "a.model"}, after_where=True, model=model)
    clause, scope_params = (scope or EVERYTHING).clause("a")
    return store.frame(
        f"""
        with found as (select distinct f.trajectory_id, f.code from failure_codes f join v_attempts a using (trajectory_id)
                       where f.coder = ? and f.taxonomy_version = ? and a.outcome = 'failed' and f.code <> 'harness_failure'
                       and {clause} {where})
        select x.code as code_a, y.code as code_b, count(*) as attempts
        from found x join found y on x.trajectory_id = y.trajectory_id and x.code < y.code
        group by all order by attempts desc, code_a, code_b""",
        [coder, version, *scope_params, *params],
    )


def taxonomy_versions(store: Store) -> list[str]:
    """Taxonomy versions any coder has coded under, newest last."""
    return sorted(store.frame("select distinct taxonomy_version from coding_status")["taxonomy_version"])


def coders(store: Store) -> list[str]:
    """Coders that have coded the store."""
    return sorted(store.frame("select distinct coder from coding_status")["coder"])


def filter_options(store: Store) -> dict[str, list[str]]:
    """What the dashboard's filters offer, from one open of the store (a page's first load opened it
    once per option, ~60 ms each): agent, model, run, task_type, language, tier (of every attempt,
    training rollouts included), taxonomy_version, coder; each sorted."""

    def distinct(sql: str) -> list[str]:
        return sorted(value for (value,) in store.query(sql)[1] if value is not None)

    return {
        "agent": agents(store),
        "model": known_models(store),
        "run": distinct("select run_id from runs"),
        **{
            column: distinct(f"select distinct {column} from v_attempts")
            for column in ("task_type", "language", "tier")
        },
        "taxonomy_version": taxonomy_versions(store),
        "coder": coders(store),
    }


def trajectory_list(
    store: Store,
    *,
    scope: Scope | None = None,
    search: str | None = None,
    outcome: str | None = None,
    code: str | None = None,
    limit: int = 1000,
) -> pd.DataFrame:
    """Trajectories to browse, newest run first: what a viewer's list shows.

    `search` matches (case-insensitively) the trajectory id, task, model or agent; `code` keeps
    trajectories any coder gave that code. Columns: trajectory_id, system (agent · model), task_id,
    outcome, reward, n_steps, harness_error, codes (comma-separated, every coder's), run_id.
    """
    clause, params = (scope or EVERYTHING).clause("t")
    where, extra = _where({"outcome": "t.outcome"}, after_where=True, outcome=outcome)
    if search:
        where += (
            " and (t.trajectory_id ilike ? or t.task_id ilike ? or t.model ilike ? or coalesce(r.agent, '') ilike ?)"
        )
        extra += [f"%{search}%"] * 4
    if code:
        where += " and exists (select 1 from failure_codes f where f.trajectory_id = t.trajectory_id and f.code = ?)"
        extra.append(code)
    return store.frame(
        f"""
        select t.trajectory_id, {_SYSTEM.format(model="t.model")} as system, t.task_id, t.outcome, t.reward, t.n_steps,
               t.harness_error,
               (select string_agg(distinct f.code, ', ' order by f.code) from failure_codes f
                where f.trajectory_id = t.trajectory_id) as codes, t.run_id
        from trajectories t left join runs r on r.run_id = t.run_id
        where {clause} {where}
        order by r.started_at desc nulls last, t.run_id, t.task_id, t.attempt, t.trajectory_id limit ?""",
        [*params, *extra, limit],
    )


def trajectory_summary(store: Store, trajectory_id: str) -> dict[str, Any]:
    """What a trajectory viewer's header says: task, system, outcome, reward, harness error, tests.

    Keys: trajectory_id, run_id, task_id, agent, model, outcome, reward, harness_error,
    exception_type, n_steps, input_tokens, output_tokens, cost_usd, tier (authored), source_path,
    tests_passed, tests. Raises ValueError naming the fix when the id is not in the store.
    """
    frame = store.frame(
        """
        select t.trajectory_id, t.run_id, t.task_id, r.agent, t.model, t.outcome, t.reward, t.harness_error,
               t.exception_type, t.n_steps, t.input_tokens, t.output_tokens, t.cost_usd, k.tier_authored as tier,
               t.source_path,
               (select count(*) filter (x.passed) from test_results x where x.trajectory_id = t.trajectory_id) as tests_passed,
               (select count(*) from test_results x where x.trajectory_id = t.trajectory_id) as tests
        from trajectories t left join runs r on r.run_id = t.run_id left join tasks k on k.task_id = t.task_id
        where t.trajectory_id = ?""",
        [trajectory_id],
    )
    if frame.empty:
        raise ValueError(
            f"no trajectory {trajectory_id!r} in the store. Pick one from the list, or "
            '`curriculab query "select trajectory_id from trajectories"`'
        )
    return records(frame)[0]


def trajectory_tests(store: Store, trajectory_id: str) -> pd.DataFrame:
    """One trajectory's test verdicts. Columns: test_id, tier, milestone_idx, passed, status, detail."""
    return store.frame(
        """select test_id, tier, milestone_idx, passed, status, detail from test_results
                          where trajectory_id = ? order by milestone_idx nulls last, tier nulls last, test_id""",
        [trajectory_id],
    )


def agents(store: Store) -> list[str]:
    """Every agent with a run in the store, sorted."""
    return sorted(store.frame("select distinct agent from runs where agent is not null")["agent"])


STRATA = ("coded present", "coded absent", "near miss")
"""How the labelling page samples a code's trajectories: ones the coder found it in, ones it judged
free of it, and near misses (judged free of it, but with another code found: failed behaviour the
coder saw and did not call this)."""


def labelling_queue(
    store: Store,
    code: str,
    coder: str,
    taxonomy_version: str,
    annotator: str,
    *,
    scope: Scope | None = None,
    seed: int = 0,
    limit: int = 60,
) -> pd.DataFrame:
    """Trajectories to label for `code`, stratified (see `STRATA`): in a stable random order within
    each stratum, the strata taking turns so that each gets labels as evenly as it can (the strata
    `annotator` labelled least come first); those already labelled for the code are left out.

    Columns: trajectory_id, system, task_id, outcome, stratum, coder_says (present/absent),
    confidence, queued (how many wait in all, past `limit` too).
    """
    clause, params = (scope or EVERYTHING).clause("t")
    return store.frame(
        f"""
        with judged as (
            select c.trajectory_id, c.status,
                   case when c.status = 'present' then 'coded present'
                        when exists (select 1 from coding_status o where o.trajectory_id = c.trajectory_id
                                     and o.coder = c.coder and o.taxonomy_version = c.taxonomy_version
                                     and o.code not in (c.code, 'harness_failure') and o.status = 'present')
                        then 'near miss' else 'coded absent' end as stratum,
                   exists (select 1 from labels l where l.trajectory_id = c.trajectory_id and l.annotator = ?
                           and list_contains(?, l.taxonomy_version || ':' || l.code)) as labelled
            from coding_status c
            where c.code = ? and c.coder = ? and c.taxonomy_version = ? and c.status <> 'not_applicable'),
        done as (select stratum, count(*) as labelled_before from judged where labelled group by 1),
        ranked as (
            select j.trajectory_id, {_SYSTEM.format(model="t.model")} as system, t.task_id, t.outcome, j.stratum,
                   j.status as coder_says, f.confidence,
                   coalesce(d.labelled_before, 0)
                   + row_number() over (partition by j.stratum order by hash(j.trajectory_id || ?), j.trajectory_id) as turn
            from judged j join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
            left join done d using (stratum)
            left join failure_codes f on f.trajectory_id = j.trajectory_id and f.code = ? and f.coder = ?
                 and f.taxonomy_version = ?
            where not j.labelled and {clause})
        select * exclude (turn), count(*) over () as queued from ranked
        order by turn, list_position(?, stratum) limit ?""",
        [
            annotator,
            _labelled_as(code, taxonomy_version),
            code,
            coder,
            taxonomy_version,
            str(seed),
            code,
            coder,
            taxonomy_version,
            *params,
            list(STRATA),
            limit,
        ],
    )


def _labelled_as(code: str, taxonomy_version: str) -> list[str]:
    """`version:code` of every stored label that judges `code` of `taxonomy_version` (its own, and
    older versions' carried through the mapping), so a label given under v1 is not asked again."""
    from curriculab.taxonomy.taxonomy import load_taxonomy  # pydantic and YAML: only the labelling queue needs them

    taxonomy = load_taxonomy(taxonomy_version)
    return [
        f"{version}:{old}"
        for version in [taxonomy.version, *taxonomy.older_versions]
        for old, new in taxonomy.labels_carried_from(version).items()
        if new == code
    ]
