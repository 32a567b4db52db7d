"""Failure codes: distributions, cells, clusters, coverage, reliability, milestones, co-occurrence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import Store, check_filter

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import (
    _SYSTEM,
    EVERYTHING,
    TRAINING_AGENT,
    TRAINING_RUN,
    Scope,
    SqlRead,
    Statement,
    _where,
)
from curriculab.taxonomy.coders.environment import OBSERVING_AGENTS


@SqlRead
def failure_distribution(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    dimension: str | tuple[str, ...] = "overall",
    taxonomy_version: str | None = None,
    scope: Scope | None = None,
) -> Statement:
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
def code_timeouts(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None
) -> Statement:
    """Per system (agent · model) and code: failures with the code (present), and of those how many
    ran out of time (the harness recorded `agent_timeout`): an `all_tests_fail` that timed out says
    the agent needed more time, not only that its work was wrong. Sum over a model's systems for
    the model's figure.

    Columns: model, system, code, present, timed_out.
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
        select t.model, {_SYSTEM.format(model="t.model")} as system, c.code, count(*) as present,
               count(*) filter (t.harness_error = 'agent_timeout') as timed_out
        from coding_status c join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
        where t.outcome = 'failed' and c.status = 'present' {where}
        group by all order by all""",
        params,
    )


@SqlRead
def failure_cells(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    taxonomy_version: str | None = None,
    by: str = "model",
) -> Statement:
    """Per model (`by="system"`: per system, agent · model), code and task: failures with the code
    (present) and failures judged (applied).

    Columns: model, code, task_id, present, applied (and system first, by system).
    """
    if by not in ("model", "system"):
        raise ValueError(f"failure_cells is by 'model' or 'system', not {by!r}")
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
        select {_SYSTEM.format(model="t.model") + " as system, " if by == "system" else ""}t.model, c.code, t.task_id,
               count(*) filter (c.status = 'present') as present,
               count(*) filter (c.status <> 'not_applicable') as applied
        from coding_status c join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
        where t.outcome = 'failed' and c.code <> 'harness_failure' {where}
        group by all order by all""",
        params,
    )


@SqlRead
def failure_clusters(
    store: Store,
    coder: str = "rules",
    *,
    model: str | None = None,
    taxonomy_version: str | None = None,
    by: str = "model",
) -> Statement:
    """`failure_cells` as one row per model (`by="system"`: per system) and code: its tasks' counts
    as lists in task order (the clusters a bootstrap resamples), a row per interval rather than per task.

    Columns: model, code, present (list), applied (list) (and system first, by system).
    """
    cells, params = failure_cells.statement(store, coder, model=model, taxonomy_version=taxonomy_version, by=by)
    unit = "system, model" if by == "system" else "model"
    return (
        f"""select {unit}, code, list(present order by task_id) as present, list(applied order by task_id) as applied
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
) -> Statement:
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


@SqlRead
def failure_sections(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None, top: int = 10
) -> Statement:
    """A coder's failure reads for one report, from one pass over its codes on the failed attempts
    (each of those reads alone joins the codes to the failures again; together they were most of a
    report's database time, bench/RESULTS.md "The report where users wait"). One row, a column per
    read, each the list of that read's rows as it returns them (same columns, same order):

    distribution (`failure_distribution`, dimensions overall and tier), system_distribution (its
    per-system form over the evaluation attempts, `scope=Scope(model=model)`), share_clusters and
    system_clusters (`failure_clusters` by model and by system), coverage (`coder_coverage`), pairs
    (`failure_code_pairs`), timeouts (`code_timeouts`).
    """
    version = taxonomy_version or latest_taxonomy_version(store, coder)
    where, params = _where({"model": "t.model"}, after_where=True, model=model)
    training = TRAINING_RUN.format(agent="r.agent", run_id="t.run_id")
    # a nullable `training`: `not training` keeps what `Scope(kind="evaluation")` keeps
    return (
        f"""
        with failed as materialized (
            select t.trajectory_id, t.model, t.task_id, coalesce(k.tier_authored, '(none)') as tier,
                   coalesce(r.agent, '(unknown)') as agent, {_SYSTEM.format(model="t.model")} as system,
                   coalesce(t.harness_error = 'agent_timeout', false) as timed_out, {training} as training
            from trajectories t left join tasks k using (task_id) left join runs r on r.run_id = t.run_id
            where t.outcome = 'failed' {where}),
        coded as materialized (
            select f.*, c.code, c.status, c.reason from failed f join coding_status c using (trajectory_id)
            where c.coder = ? and c.taxonomy_version = ?),
        cells as materialized (
            select training, agent, system, model, task_id, tier, code,
                   count(*) filter (status = 'present') as present,
                   count(*) filter (status <> 'not_applicable') as applied,
                   count(*) filter (status = 'present' and timed_out) as timed_out
            from coded group by all),
        slices as (
            select model, 'overall' as dimension, 'all' as value, code, present, applied from cells
            where code <> 'harness_failure'
            union all select model, 'tier', tier, code, present, applied from cells where code <> 'harness_failure'),
        slice_totals as (
            select model, 'overall' as dimension, 'all' as value, count(*) as failures from failed group by all
            union all select model, 'tier', tier, count(*) from failed group by all),
        distribution as (
            select model, code, dimension, value, sum(present)::bigint as n, sum(applied)::bigint as applied,
                   any_value(tot.failures) as failures
            from slices join slice_totals tot using (model, dimension, value) group by all),
        system_totals as (select system, count(*) as failures from failed where not training group by 1),
        system_distribution as (
            select agent, model, system, code, sum(present)::bigint as n, sum(applied)::bigint as applied,
                   any_value(tot.failures) as failures
            from cells join system_totals tot using (system) where not training group by all),
        task_cells as (
            select system, model, code, task_id, sum(present)::bigint as present, sum(applied)::bigint as applied
            from cells where code <> 'harness_failure' group by all),
        model_cells as (
            select model, code, task_id, sum(present)::bigint as present, sum(applied)::bigint as applied
            from task_cells group by all),
        judged as (
            select trajectory_id, bool_or(status <> 'not_applicable') as judged,
                   mode(reason) filter (status = 'not_applicable') as why_not
            from coded where code <> 'harness_failure' group by 1),
        coverage as (
            select f.model, count(*) as failures, count(*) filter (j.judged) as coded_failures,
                   mode(coalesce(j.why_not, 'not coded')) filter (not coalesce(j.judged, false)) as why_not_coded
            from failed f left join judged j using (trajectory_id) group by 1),
        found as (
            select distinct f.trajectory_id, f.code from failure_codes f join failed using (trajectory_id)
            where f.coder = ? and f.taxonomy_version = ? and f.code <> 'harness_failure'),
        single as (select code, count(*) as n from found group by 1),
        pairs as (
            select x.code as code_a, y.code as code_b, count(*) as n, min(x.trajectory_id) as first_seen
            from found x join found y on x.trajectory_id = y.trajectory_id and x.code < y.code group by all),
        timeouts as (
            select model, system, code, sum(present)::bigint as present, sum(timed_out)::bigint as timed_out
            from cells group by all having sum(present) > 0)
        select
            (select list({{'coder': ?, 'taxonomy_version': ?, 'model': model, 'code': code, 'dimension': dimension,
                          'value': value, 'n': n, 'applied': applied, 'failures': failures,
                          'share': n / nullif(applied, 0), 'coverage': applied / failures,
                          'ci_low': case when applied > 0 then wilson_low(n, applied) end,
                          'ci_high': case when applied > 0 then wilson_high(n, applied) end}}
                          order by model, n / nullif(applied, 0) desc nulls last, code, dimension, value)
             from distribution) as distribution,
            (select list({{'coder': ?, 'taxonomy_version': ?, 'agent': agent, 'model': model, 'system': system,
                          'code': code, 'dimension': 'overall', 'value': 'all', 'n': n, 'applied': applied,
                          'failures': failures, 'share': n / nullif(applied, 0), 'coverage': applied / failures,
                          'ci_low': case when applied > 0 then wilson_low(n, applied) end,
                          'ci_high': case when applied > 0 then wilson_high(n, applied) end}}
                          order by system, n / nullif(applied, 0) desc nulls last, code)
             from system_distribution) as system_distribution,
            (select list({{'model': model, 'code': code, 'present': present, 'applied': applied}}
                          order by model, code)
             from (select model, code, list(present order by task_id) as present,
                          list(applied order by task_id) as applied from model_cells group by all)) as share_clusters,
            (select list({{'system': system, 'model': model, 'code': code, 'present': present, 'applied': applied}}
                          order by system, model, code)
             from (select system, model, code, list(present order by task_id) as present,
                          list(applied order by task_id) as applied from task_cells group by all)) as system_clusters,
            (select list({{'model': model, 'failures': failures, 'coded_failures': coded_failures,
                          'why_not_coded': why_not_coded}} order by model) from coverage) as coverage,
            (select list({{'code_a': p.code_a, 'code_b': p.code_b, 'n': p.n,
                          'lift': (p.n * (select count(distinct trajectory_id) from found))::double / (a.n * b.n)::double}}
                          order by p.n desc, p.first_seen, p.code_a, p.code_b)[:?]
             from pairs p join single a on a.code = p.code_a join single b on b.code = p.code_b) as pairs,
            (select list({{'model': model, 'system': system, 'code': code, 'present': present, 'timed_out': timed_out}}
                          order by model, system, code) from timeouts) as timeouts""",
        [TRAINING_AGENT, *params, coder, version, coder, version, coder, version, coder, version, top],
    )


def latest_taxonomy_version(store: Store, coder: str) -> str | None:
    """The newest taxonomy version `coder` has coded under, or None if it never ran."""
    _, rows = store.query("select max(taxonomy_version) from coding_status where coder = ?", [coder])
    return None if rows[0][0] is None else str(rows[0][0])


@SqlRead
def code_reliability(
    store: Store, coder: str | None = None, *, taxonomy_version: str | None = None, computed_at: bool = True
) -> Statement:
    """Whether each code from each coder may be relied on, per annotator.

    Columns: coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable,
    in_sample (a classifier measured on its own training labels), computed_at, method (labels:
    measured against an annotator; verifier: exact by construction), family (the format family
    measured, `format_family`; '' pools every format). `computed_at=False` leaves that column out:
    a timestamp with a time zone makes DuckDB import pytz (a report never shows it).
    """
    where, params = _where({"coder": "coder", "version": "taxonomy_version"}, coder=coder, version=taxonomy_version)
    columns = "*" if computed_at else "* exclude (computed_at)"
    return (f"select {columns} from code_reliability{where} order by coder, code, annotator", params)


def coder_agreement(store: Store, coder: str | None = None, *, annotator: str | None = None) -> pd.DataFrame:
    """Coder-vs-annotator agreement as last measured (`curriculab agreement`).

    Columns: coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable, computed_at,
    family ('' pools every format).
    """
    where, params = _where({"coder": "coder", "annotator": "annotator"}, coder=coder, annotator=annotator)
    return store.frame(f"select * from v_coder_agreement{where} order by coder, annotator, code", params)


@SqlRead
def milestone_funnel(
    store: Store, *, model: str | None = None, task_type: str | None = None, scope: Scope | None = None
) -> Statement:
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


@SqlRead
def failed_code_sets(
    store: Store, coder: str = "rules", *, model: str | None = None, taxonomy_version: str | None = None
) -> Statement:
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
) -> Statement:
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
    narrower, params = "", list[Any]()
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


def environment_evidence(
    store: Store, where: str | None = None, *, run_id: str | None = None, uncoded_by: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the environment coder reads: trajectories whose agent steps carry what an episode's
    environment observed (`raw.observed`), or of an agent whose every trial is an observed episode
    (`OBSERVING_AGENTS`: one that ran no command has no such step), matching
    `where`, of one run, and/or not yet coded by `uncoded_by`.

    Returns (trajectories, commands). trajectories: trajectory_id, outcome. commands:
    trajectory_id, step_idx, command, exit_code, output, output_truncated, changed (a JSON list),
    timed_out, executed (a JSON list, NULL where not recorded), check_run (JSON: the harness's replay
    of the agent's last test-runner check, on the episode's last command; `null` where the harness
    judged the episode and replayed none; NULL where not recorded), in step order.
    """
    if where:
        check_filter(store, where)
    narrower, params = "", list[Any]()
    if run_id is not None:
        narrower, params = narrower + " and t.run_id = ?", params + [run_id]
    if uncoded_by is not None:
        narrower += (
            " and not exists (select 1 from coding_status c where c.trajectory_id = t.trajectory_id and c.coder = ?)"
        )
        params.append(uncoded_by)
    chosen = store.frame(
        f"""
        select t.trajectory_id, t.outcome from trajectories t
        where t.trajectory_id in (select trajectory_id from trajectories where ({where or "true"})){narrower}
          and (exists (select 1 from steps s where s.trajectory_id = t.trajectory_id and s.source = 'agent'
                       and json_exists(s.raw, '$.observed'))
               or t.run_id in (select run_id from runs where list_contains(?, agent)))
        order by t.trajectory_id""",
        [*params, list(OBSERVING_AGENTS)],
    )
    commands = store.frame(
        """select trajectory_id, step_idx, command, exit_code, output, output_truncated,
                  coalesce(json_extract_string(raw, '$.observed.changed'), '[]') as changed,
                  coalesce(json_extract(raw, '$.observed.timed_out')::boolean, false) as timed_out,
                  json_extract_string(raw, '$.observed.executed') as executed,
                  json_extract(raw, '$.observed.check_run')::varchar as check_run
           from steps where list_contains(?, trajectory_id) and source = 'agent' and json_exists(raw, '$.observed')
           order by trajectory_id, step_idx""",
        [list(chosen["trajectory_id"])],
    )
    return chosen, commands


def coding_statuses(store: Store, coders: list[str], codes: list[str], taxonomy_version: str) -> pd.DataFrame:
    """Each of `coders`' statuses on `codes` under one taxonomy version. Columns: trajectory_id,
    coder, code, status."""
    return store.frame(
        """select trajectory_id, coder, code, status from coding_status
           where list_contains(?, coder) and list_contains(?, code) and taxonomy_version = ?
           order by trajectory_id, code, coder""",
        [coders, codes, taxonomy_version],
    )


def top_code_by_model(store: Store, coder: str = "rules") -> pd.DataFrame:
    """Each model's most frequent code among its failed attempts. Columns: model, code, n."""
    return store.frame(
        """
        select t.model, f.code, count(*) as n from failure_codes f join trajectories t using (trajectory_id)
        where f.coder = ? and t.outcome = 'failed' group by t.model, f.code
        qualify row_number() over (partition by t.model order by count(*) desc, f.code) = 1 order by t.model""",
        [coder],
    )


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


def coders_with_codes(store: Store) -> list[str]:
    """Coders that found at least one failure code (not only abstained, judged everything absent or
    marked harness faults)."""
    return [
        c
        for (c,) in store.query(
            "select distinct coder from failure_codes where code <> 'harness_failure' order by 1"
        ).rows
    ]
