"""One trajectory or a selection of them: steps, codes, tests, evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import Store, check_filter

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import _SYSTEM, EVERYTHING, Scope, SqlRead, Statement, _where, records
from curriculab.analysis.queries.failures import latest_taxonomy_version


def trajectory(store: Store, trajectory_id: str) -> pd.DataFrame:
    """One trajectory's steps, each with the codes that cite it as evidence.

    Columns: step_idx, source, action, tool_name, path, command, message, output, exit_code,
    error_observed, output_truncated, edit_raw (an edit step's source record as JSON, where its
    content or old/new strings live), codes (list of `coder:code` citing this step), call_exit_code
    and call_error (the status of the tool call the step is part of: a command line's, where its
    parts have none of their own).
    """
    frame = store.frame(
        """
        select s.step_idx, s.source, s.action, s.tool_name, s.path, s.command, s.message, s.output, s.exit_code,
               s.error_observed, s.output_truncated, case when s.action = 'edit' then s.raw::varchar end as edit_raw,
               coalesce((select list(f.coder || ':' || f.code order by f.coder, f.code) from failure_codes f
                         where f.trajectory_id = s.trajectory_id and list_contains(f.evidence_steps, s.step_idx)),
                        []) as codes, s.call_exit_code, s.call_error
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


def agent_command_lines(store: Store, where: str | None = None) -> list[str]:
    """The distinct command lines the agents of the trajectories matching `where` (a checked filter
    on `trajectories`) ran: what the shell reading reads once each before the rules code them."""
    from curriculab.taxonomy.coders.rules import COMMANDS_SQL

    return [command for (command,) in store.query(COMMANDS_SQL.format(where=where or "true")).rows]


def trajectory_ids(store: Store) -> set[str]:
    """Every stored trajectory id."""
    return set(store.frame("select trajectory_id from trajectories")["trajectory_id"])


@SqlRead
def failure_formats(store: Store, *, model: str | None = None) -> Statement:
    """The formats each model's failed attempts were read from, with their agents: what
    `format_families` turns into the families a coder's reliability must be measured on.

    Columns: model, source_format, agent, failures.
    """
    where, params = _where({"model": "t.model"}, model=model, after_where=True)
    return (
        f"""select t.model, coalesce(t.source_format, r.source_format) as source_format, r.agent, count(*) as failures
            from trajectories t left join runs r using (run_id)
            where t.outcome = 'failed'{where} group by all order by all""",
        params,
    )


def system_name(agent: str | None, model: str) -> str:
    """A system's display name, as `_SYSTEM` spells it in SQL: agent · model."""
    return f"{agent or '(unknown)'} · {model}"


def format_families(rows: list[dict[str, Any]], by: str = "model") -> dict[str, list[str]]:
    """Per model (`by="system"`: per system, agent · model, the unit the planner plans for), the
    format families (`format_family`) of its failures, from `failure_formats` rows."""
    from curriculab.trajectory.vocabulary import format_family

    families: dict[str, set[str]] = {}
    for row in rows:
        key = row["model"] if by == "model" else system_name(row["agent"], row["model"])
        families.setdefault(key, set()).add(format_family(row["source_format"], row["agent"]))
    return {model: sorted(found) for model, found in families.items()}


def trajectory_families(store: Store) -> pd.DataFrame:
    """The format family (`format_family`) of each trajectory: the unit a coder's reliability is
    measured per. Columns: trajectory_id, family."""
    from curriculab.trajectory.vocabulary import format_family

    frame = store.frame(
        "select t.trajectory_id, coalesce(t.source_format, r.source_format) as source_format, r.agent "
        "from trajectories t left join runs r using (run_id)"
    )
    frame["family"] = [format_family(f, a) for f, a in zip(frame["source_format"], frame["agent"])]
    return frame[["trajectory_id", "family"]]


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


def trajectory_coders(store: Store, trajectory_id: str) -> pd.DataFrame:
    """What each coder decided on one trajectory: how many codes it judged present, absent and not
    applicable, and one reason it gave for not applicable (what a viewer says when no code was found).

    Columns: coder, present, absent, not_applicable, reason.
    """
    return store.frame(
        """select coder, count(*) filter (status = 'present') as present,
                  count(*) filter (status = 'absent') as absent,
                  count(*) filter (status = 'not_applicable') as not_applicable,
                  min(reason) filter (status = 'not_applicable') as reason
           from coding_status where trajectory_id = ? group by coder order by coder""",
        [trajectory_id],
    )


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
    outcome, reward, n_steps, harness_error, codes (comma-separated, every coder's), run_id, matched
    (how many trajectories match in all, beyond `limit`).
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
                where f.trajectory_id = t.trajectory_id) as codes, t.run_id, count(*) over () as matched
        from trajectories t left join runs r on r.run_id = t.run_id
        where {clause} {where}
        order by r.started_at desc nulls last, t.run_id, t.task_id, t.attempt, t.trajectory_id limit ?""",
        [*params, *extra, limit],
    )


def trajectory_summary(store: Store, trajectory_id: str) -> dict[str, Any]:
    """What a trajectory viewer's header says: task, system, outcome, reward, harness error, tests.

    Keys: trajectory_id, run_id, task_id, agent, model, outcome, reward, harness_error,
    exception_type, n_steps, input_tokens, output_tokens, cost_usd, tier (authored), source_path,
    tests_passed, tests, milestones_passed, milestones_total (None for a task without milestones).
    Raises ValueError naming the fix when the id is not in the store.
    """
    frame = store.frame(
        """
        select t.trajectory_id, t.run_id, t.task_id, r.agent, t.model, t.outcome, t.reward, t.harness_error,
               t.exception_type, t.n_steps, t.input_tokens, t.output_tokens, t.cost_usd, k.tier_authored as tier,
               t.source_path,
               (select count(*) filter (x.passed) from test_results x where x.trajectory_id = t.trajectory_id) as tests_passed,
               (select count(*) from test_results x where x.trajectory_id = t.trajectory_id) as tests,
               t.milestones_passed, t.milestones_total
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


EPISODE_FORMATS = ("tb", "harbor")
"""Formats whose attempts are agent episodes in a terminal (Terminal-Bench runs, Harbor jobs): what an
agent's plan trains is terminal tasks, not single completions."""


def attempts_are_episodes(store: Store, model: str, agent: str | None = None) -> bool:
    """Whether every attempt of `model` (`agent`: of the system agent · model) was read from a format
    of agent episodes (`EPISODE_FORMATS`); False when it has none."""
    where, params = _where({"model": "t.model", "agent": "r.agent"}, model=model, agent=agent)
    formats = {
        f
        for (f,) in store.query(
            f"select distinct coalesce(t.source_format, r.source_format) from trajectories t "
            f"left join runs r using (run_id){where}",
            params,
        ).rows
    }
    return bool(formats) and formats <= set(EPISODE_FORMATS)
