"""Attempts and their verdicts: pass rates by slice, systems, pooling, harness errors, the
dashboard's filter options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import Store
from curriculab.trajectory.vocabulary import AGENT_FAULTS

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import (
    _SYSTEM,
    EVERYTHING,
    SLICES,
    Scope,
    SqlRead,
    Statement,
    _and_scope,
    _where,
)
from curriculab.analysis.queries.difficulty import TASK_HEALTH_SQL
from curriculab.analysis.queries.failures import coders, taxonomy_versions

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
def pass_rates(store: Store, *, slice: str = "overall", model: str | None = None) -> Statement:
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
def task_cells(store: Store, *, model: str | None = None) -> Statement:
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
def tasks_by_id(store: Store, task_ids: list[str] | None = None) -> Statement:
    """The stored tasks among `task_ids` (None: all). Columns: task_id, tier_authored, n_milestones, metadata."""
    return (
        "select task_id, tier_authored, n_milestones, metadata from tasks "
        "where ?::varchar[] is null or list_contains(?, task_id) order by 1",
        [task_ids, task_ids],
    )


def milestones_reached(store: Store, model: str) -> float | None:
    """The mean number of milestones `model`'s failed attempts passed (None: none recorded)."""
    _, rows = store.query(
        """select avg(milestones_passed) from trajectories
           where model = ? and outcome = 'failed' and milestones_total is not null""",
        [model],
    )
    return None if rows[0][0] is None else float(rows[0][0])


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


test_failure_rates.__test__ = False  # type: ignore[attr-defined]  # a query, not a pytest test


@SqlRead
def harness_errors(store: Store, *, model: str | None = None, scope: Scope | None = None) -> Statement:
    """Attempts whose record names a harness error, by error and by what it means for the attempt:
    one definition of "harness" everywhere (the Outcomes policy, docs/formats.md, taxonomy v4's
    `harness_failure`): an infrastructure fault leaves no verdict and is outside pass rates; an
    agent's own fault (a timeout, a crash) is the agent's failure and counts; any other fault with a
    verdict keeps the verdict, flagged.

    Columns: system (agent · model), model, harness_error (`unnamed` where a record with no verdict named none), verdict
    (`INFRASTRUCTURE_FAULT`, `AGENT_FAULT_FAILED`, `AGENT_FAULT_PASSED` — an agent's fault on an
    attempt that passed anyway is no failure — or `<outcome> (stands, flagged)`), attempts.
    """
    where, params = _where({"model": "t.model"}, after_where=True, model=model)
    clause, scope_params = (scope or EVERYTHING).clause("t")
    return (
        f"""
        select {_SYSTEM.format(model="t.model")} as system, t.model, coalesce(harness_error, 'unnamed') as harness_error,
               case when outcome = 'error' then '{INFRASTRUCTURE_FAULT}'
                    when list_contains(?, harness_error) and outcome = 'passed' then '{AGENT_FAULT_PASSED}'
                    when list_contains(?, harness_error) then '{AGENT_FAULT_FAILED}'
                    else outcome || ' (stands, flagged)' end as verdict,
               count(*) as attempts
        from trajectories t left join runs r on r.run_id = t.run_id
        where (harness_error is not null or outcome = 'error') and {clause} {where}
        group by all order by all""",
        [sorted(AGENT_FAULTS), sorted(AGENT_FAULTS), *scope_params, *params],
    )


@SqlRead
def failure_endings(
    store: Store, *, by: str = "system", model: str | None = None, scope: Scope | None = None
) -> Statement:
    """How failed attempts ended, per system (agent · model) or per system and task, read from the
    harness's own record (`harness_error`): out of time (`agent_timeout`), another fault of the
    agent's own (a crash, a parse error, a full context), or at the tests' verdict. A failure that
    ran out of time says the agent needed more time, whatever the tests' codes then say of it.

    Columns: agent, model, system, task_id (`by="task"` only), attempts (with a verdict), failures,
    timed_out, crashed (another agent fault), to_verdict (neither), timeout_share (timed_out /
    failures), ci_low, ci_high (Wilson 95% of timeout_share), passed_despite_fault (passes whose
    record names an agent fault: passes, not failures).
    """
    if by not in ("system", "task"):
        raise ValueError(f"failure_endings is by 'system' or 'task', not {by!r}")
    task = ", a.task_id" if by == "task" else ""
    where, params = _where({"model": "a.model"}, after_where=True, model=model)
    clause, scope_params = (scope or EVERYTHING).clause("a")
    return (
        f"""
        with counted as (
            select coalesce(r.agent, '(unknown)') as agent, a.model, {_SYSTEM.format(model="a.model")} as system{task},
                   count(*) as attempts, count(*) filter (a.outcome = 'failed') as failures,
                   count(*) filter (a.outcome = 'failed' and a.harness_error = 'agent_timeout') as timed_out,
                   count(*) filter (a.outcome = 'failed' and a.harness_error <> 'agent_timeout'
                                    and list_contains(?, a.harness_error)) as crashed,
                   count(*) filter (a.outcome = 'passed' and list_contains(?, a.harness_error)) as passed_despite_fault
            from v_attempts a join trajectories t using (trajectory_id) left join runs r on r.run_id = t.run_id
            where {clause} {where} group by all)
        select agent, model, system{task.replace("a.", "")}, attempts, failures, timed_out, crashed,
               failures - timed_out - crashed as to_verdict, timed_out / nullif(failures, 0) as timeout_share,
               case when failures > 0 then wilson_low(timed_out, failures) end as ci_low,
               case when failures > 0 then wilson_high(timed_out, failures) end as ci_high, passed_despite_fault
        from counted order by system{task.replace("a.", "")}""",
        [sorted(AGENT_FAULTS), sorted(AGENT_FAULTS), *scope_params, *params],
    )


INFRASTRUCTURE_FAULT = "none: infrastructure fault (left out)"
"""`harness_errors.verdict` of an attempt the infrastructure failed (outcome `error`)."""
AGENT_FAULT_FAILED = "failed with an agent fault (counted)"
"""`harness_errors.verdict` of a failed attempt whose record names the agent's own fault (a timeout, a crash)."""
AGENT_FAULT_PASSED = "passed despite a recorded agent fault (counted)"
"""`harness_errors.verdict` of an attempt that passed although its record names an agent fault
(Terminal-Bench records `agent_timeout` on trials whose tests then passed): a pass, not a failure."""


@SqlRead
def unknown_models(store: Store, *, model: str | None = None) -> Statement:
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
def systems(store: Store, *, model: str | None = None, scope: Scope | None = None) -> Statement:
    """Pass rates per system (agent, agent version, model), the unit a leaderboard compares, in the
    leaderboard's own order (its figure, `leaderboard_accuracy`, best first; the judged pass rate breaks ties).

    Columns: agent, agent_version, model, runs, trials (every attempt), attempts (with a verdict),
    passes, pass_rate (over attempts), ci_low, ci_high (Wilson 95% of pass_rate), errors (no
    verdict), leaderboard_accuracy (every trial counts and an error is a failure, averaged over
    runs: the figure Terminal-Bench publishes), run_low, run_high (the lowest and highest run's
    accuracy: the run-to-run spread), run_accuracies (each run's accuracy, in run order);
    replicates, spread_low, spread_high, spread_method: the spread for every system — over its
    replicate runs where run ids separate them, else over its attempts per task (attempt i of every
    task as one replicate: `attempt index`), else none (`one attempt per task`).
    """
    where, params = _where({"model": "t.model"}, model=model)
    where, params = _and_scope(where, params, scope, "t")
    return (
        f"""
        with per_run as (
            select coalesce(r.agent, '(unknown)') as agent, coalesce(r.agent_version, '') as agent_version, t.model,
                   t.run_id, count(*) as trials, count(*) filter (t.outcome <> 'error') as attempts,
                   count(*) filter (t.outcome = 'passed') as passes, count(*) filter (t.outcome = 'error') as errors
            from trajectories t left join runs r on r.run_id = t.run_id{where} group by all),
        per_attempt as (
            select coalesce(r.agent, '(unknown)') as agent, coalesce(r.agent_version, '') as agent_version, t.model,
                   t.attempt, count(*) filter (t.outcome = 'passed') / count(*) as accuracy
            from trajectories t left join runs r on r.run_id = t.run_id{where} group by all),
        by_attempt as (
            select agent, agent_version, model, count(*) as attempt_indices, min(accuracy) as attempt_low,
                   max(accuracy) as attempt_high
            from per_attempt group by all),
        by_run as (
            select agent, agent_version, model, count(*) as runs, sum(trials)::bigint as trials, sum(attempts)::bigint as attempts,
               sum(passes)::bigint as passes, sum(passes) / nullif(sum(attempts), 0) as pass_rate,
               wilson_low(sum(passes)::bigint, sum(attempts)::bigint) as ci_low,
               wilson_high(sum(passes)::bigint, sum(attempts)::bigint) as ci_high, sum(errors)::bigint as errors,
               avg(passes / trials) as leaderboard_accuracy, min(passes / trials) as run_low,
               max(passes / trials) as run_high, list(passes / trials order by run_id) as run_accuracies
        from per_run group by all)
        select r.*,
               case when r.runs > 1 then r.runs when a.attempt_indices > 1 then a.attempt_indices else 1 end
                   as replicates,
               case when r.runs > 1 then r.run_low when a.attempt_indices > 1 then a.attempt_low end as spread_low,
               case when r.runs > 1 then r.run_high when a.attempt_indices > 1 then a.attempt_high end as spread_high,
               case when r.runs > 1 then 'replicate runs' when a.attempt_indices > 1 then 'attempt index'
                    else 'one attempt per task' end as spread_method
        from by_run r join by_attempt a using (agent, agent_version, model)
        order by leaderboard_accuracy desc nulls last, pass_rate desc nulls last, agent, model""",
        [*params, *params],
    )


@SqlRead
def model_pooling(store: Store, *, model: str | None = None) -> Statement:
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
def attempt_evidence(store: Store, *, model: str | None = None) -> Statement:
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
def attempt_cells(store: Store, *, train_only: bool = False) -> Statement:
    """Per model and task: attempts with a verdict and passes, for the IRT fit; tasks flagged by task
    health (never or always solved, unchecked: `task_health`) are left out. With `train_only`, each
    (model, task)'s last attempt is left out when it tried more than once (held out).

    Columns: model, task_id, n, k.
    """
    return (
        f"""select model, task_id, count(*) as n, count(*) filter (passed) as k from ({_ATTEMPTS_SQL})
                           where {"not held_out and " if train_only else ""}{_HEALTHY}
                           group by 1, 2 order by 1, 2""",
        [],
    )


@SqlRead
def held_out_attempts(store: Store) -> Statement:
    """Each (model, task)'s last attempt where it tried more than once. Columns: model, task_id, passed."""
    return (f"select model, task_id, passed from ({_ATTEMPTS_SQL}) where held_out and {_HEALTHY} order by 1, 2", [])


@SqlRead
def stored_held_out(store: Store) -> Statement:
    """The held-out check stored with the last fit (`difficulty.held_out_check`; none where nothing
    could be held out). Columns: held_out, irt_log_loss, baseline_log_loss, irt_auc, baseline_auc."""
    return "select held_out, irt_log_loss, baseline_log_loss, irt_auc, baseline_auc from irt_checks", []


def authored_tier_counts(store: Store) -> dict[str, int]:
    """Attempted tasks per authored tier (basic, intermediate, complex)."""
    frame = store.frame("""select tier_authored, count(*) as n from tasks where tier_authored in ('basic', 'intermediate', 'complex')
                           and task_id in (select task_id from trajectories) group by 1""")
    return dict(zip(frame["tier_authored"], frame["n"].astype(int)))


# Each (model, task)'s last attempt is held out when it tried more than once (held_out_check).
_HEALTHY = f"task_id not in (select task_id from ({TASK_HEALTH_SQL}) where flagged)"
"""Tasks the fit may read: none that task health flags as possibly broken or trivial."""
_ATTEMPTS_SQL = """
select model, task_id, outcome = 'passed' as passed,
       row_number() over (partition by model, task_id order by attempt desc nulls last, trajectory_id desc) = 1
       and count(*) over (partition by model, task_id) > 1 as held_out
from trajectories where outcome in ('passed', 'failed') and model is not null
"""


def test_result_counts(store: Store) -> pd.DataFrame:
    """Per task (problem) and test: failures and runs. Columns: task_id, test_id, failures, runs."""
    return store.frame("""select t.task_id, r.test_id, count(*) filter (not r.passed) as failures, count(*) as runs
                          from test_results r join trajectories t using (trajectory_id) group by 1, 2 order by 1, 2""")


test_result_counts.__test__ = False  # type: ignore[attr-defined]  # a query, not a pytest test


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


def tier_pass_rates(store: Store, *, model: str | None = None) -> pd.DataFrame:
    """Per model and test tier: how often its tests pass, with a standard error over trajectories
    (the tests of one attempt are not independent); tasks flagged by task health are left out,
    as from the difficulty fit (capability evidence from a possibly broken task is none).

    Columns: model, tier, trajectories, results, passes, pass_rate, se.
    """
    where, params = _where({"model": "model"}, model=model)
    return store.frame(
        f"""
        with per_attempt as (
            select t.model, r.tier, r.trajectory_id, count(*) as results, count(*) filter (r.passed) as passes
            from test_results r join trajectories t using (trajectory_id)
            where r.tier is not null and t.outcome <> 'error' and t.{_HEALTHY} group by all)
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


def runs(store: Store) -> pd.DataFrame:
    """Stored runs. Columns: run_id, agent, agent_version, model, dataset, source_format, started_at, attempts."""
    return store.frame("""select r.run_id, r.agent, r.agent_version, r.model, r.dataset, r.source_format, r.started_at,
                                 count(t.trajectory_id) as attempts
                          from runs r left join trajectories t using (run_id) group by all order by r.run_id""")


def filter_options(store: Store) -> dict[str, list[str]]:
    """What the dashboard's filters offer, from one open of the store (a page's first load opened it
    once per option): agent, model, run, task_type, language, tier (of every attempt,
    training rollouts included), taxonomy_version, coder; each sorted."""

    def distinct(sql: str) -> list[str]:
        return sorted(value for (value,) in store.query(sql).rows if value is not None)

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


def agents(store: Store) -> list[str]:
    """Every agent with a run in the store, sorted."""
    return sorted(store.frame("select distinct agent from runs where agent is not null")["agent"])


def attempted_tasks(store: Store, model: str) -> set[str]:
    """The tasks `model` has an attempt with a verdict at (passed or failed; harness errors left out)."""
    return {
        task_id
        for (task_id,) in store.query(
            "select distinct task_id from trajectories where model = ? and outcome <> 'error'", [model]
        ).rows
    }
