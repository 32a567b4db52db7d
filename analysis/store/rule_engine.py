"""The rule coders' engine as SQL: a taxonomy's rules (each a SELECT over the documented relations
`_tt` and `_cs`) become one transaction that replaces a coder's codes and statuses on the
trajectories it codes. The rules are the taxonomy's; running them over the store's tables is the
store's (`Store.code_with_rules`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class RuleSql(Protocol):
    """What the engine reads of a rule (the rule coders' `Rule`)."""

    @property
    def code(self) -> str: ...
    @property
    def sql(self) -> str: ...
    @property
    def applicable(self) -> str: ...
    @property
    def needs_actions(self) -> bool: ...
    @property
    def missing(self) -> str: ...
    @property
    def undecided(self) -> str | None: ...


def rule_statements(
    rules: Sequence[RuleSql],
    steps: Sequence[tuple[str, Sequence[Any]]],
    where: str | None,
    taxonomy_version: str,
    coder: str,
    opaque_reason: str,
) -> list[tuple[str, list[Any]]]:
    """The rule engine as SQL for one transaction: the rules read the documented relations `_tt`
    (the trajectories matching `where`) and what the `steps` statements make of their steps (`_cs`,
    `_te`, `_turns`, `_tests`); `coder`'s earlier codes for those trajectories are replaced. A rule's `undecided` rows
    (trajectory_id, reason) are `not_applicable` with their reason unless the rule found a sighting.
    The statements before the last return the status counts per code and the number of trajectories
    coded; the temporary tables are dropped."""
    hits: list[str] = []
    applicable: list[str] = []
    undecided: list[str] = [
        "select null::varchar as trajectory_id, null::varchar as code, null::varchar as reason where false"
    ]
    for rule in rules:
        # a trajectory's sightings become one finding (all their steps, the first reason);
        # behaviour cannot be judged where the actions were not logged
        judgeable = (
            "where trajectory_id in (select trajectory_id from _tt where actions_logged)" if rule.needs_actions else ""
        )
        hits.append(
            f"select trajectory_id, '{rule.code}' as code, list_sort(list_distinct(flatten(list(evidence)))) "
            f"as evidence, min(rationale) as rationale from ({rule.sql}) {judgeable} group by trajectory_id"
        )
        applicable.append(f"select trajectory_id, '{rule.code}' as code from ({rule.applicable}) {judgeable}")
        if rule.undecided:
            undecided.append(
                f"select trajectory_id, '{rule.code}' as code, min(reason) as reason from ({rule.undecided}) "
                f"{judgeable} group by trajectory_id"
            )
    codes = ", ".join(f"('{r.code}', {str(r.needs_actions).lower()}, ?)" for r in rules)
    mine = [coder, taxonomy_version]
    return [
        (
            f"""create or replace temp table _tt as
             select trajectory_id, task_id, outcome, harness_error, coalesce(actions_logged, true) as actions_logged
             from trajectories where trajectory_id in (select trajectory_id from trajectories where ({where or "true"}))""",
            [],
        ),
        *((sql, list(params)) for sql, params in steps),
        ("create or replace temp table _hits as " + " union all ".join(hits), []),
        ("create or replace temp table _applicable as " + " union all ".join(applicable), []),
        ("create or replace temp table _undecided as " + " union all ".join(undecided), []),
        *(
            (
                f"delete from {table} where coder = ? and taxonomy_version = ? and trajectory_id in (select trajectory_id from _tt)",
                mine,
            )
            for table in ("failure_codes", "coding_status")
        ),
        (
            "insert into failure_codes (trajectory_id, code, taxonomy_version, coder, confidence, evidence_steps, rationale) "
            "select trajectory_id, code, ?, ?, 1.0, evidence, rationale from _hits",
            [taxonomy_version, coder],
        ),
        (
            f"""insert into coding_status (trajectory_id, code, coder, taxonomy_version, status, reason)
             select t.trajectory_id, c.code, ?, ?,
                    case when h.trajectory_id is not null then 'present'
                         when a.trajectory_id is not null and u.trajectory_id is null then 'absent' else 'not_applicable' end,
                    case when h.trajectory_id is null and a.trajectory_id is null
                         then case when c.needs_actions and not t.actions_logged then ? else c.missing end
                         when h.trajectory_id is null then u.reason end
             from _tt t cross join (values {codes}) c(code, needs_actions, missing)
             left join _hits h on h.trajectory_id = t.trajectory_id and h.code = c.code
             left join _applicable a on a.trajectory_id = t.trajectory_id and a.code = c.code
             left join _undecided u on u.trajectory_id = t.trajectory_id and u.code = c.code""",
            [*mine, opaque_reason, *(f"lacks what the rule reads: {r.missing}" for r in rules)],
        ),
        *(
            (f"drop table if exists {table}", [])
            for table in ("_cs", "_te", "_turns", "_tests", "_hits", "_applicable", "_undecided")
        ),
        (
            "select code, status, count(*) from coding_status where coder = ? and taxonomy_version = ? "
            "and trajectory_id in (select trajectory_id from _tt) group by all",
            mine,
        ),
        ("select count(*) from _tt", []),
        ("drop table if exists _tt", []),
    ]
