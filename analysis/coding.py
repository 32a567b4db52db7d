"""Run coders over the store and record what they found, with evidence, and where they abstained."""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.store import Store
from taxonomy.coders.rules import CODER, CODER_STEPS_SQL, RULES
from taxonomy.taxonomy import load_taxonomy


@dataclass
class CodingReport:
    """What one coding pass found, per code."""

    coder: str
    """Coder that ran (`rules`, `classifier:<id>`, `judge:<model>`)."""
    taxonomy_version: str
    """Taxonomy the codes come from."""
    trajectories: int = 0
    """Trajectories coded."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per code: how many trajectories were present / absent / not_applicable."""


def _select_trajectories(store: Store, where: str | None) -> None:
    store.execute(f"create or replace temp table _tt as select trajectory_id, outcome, harness_error "
                  f"from trajectories where {where or 'true'}")


def run_rule_coders(store: Store, where: str | None = None, taxonomy_version: str = "v1") -> CodingReport:
    """Run every rule coder over the trajectories matching `where` (SQL on `trajectories`).

    Replaces earlier rule codes for those trajectories, so re-running is idempotent.
    """
    taxonomy = load_taxonomy(taxonomy_version)
    report = CodingReport(coder=CODER, taxonomy_version=taxonomy.version)
    with store.transaction():
        _select_trajectories(store, where)
        store.execute(CODER_STEPS_SQL)
        hits, applicable = [], []
        for rule in RULES:
            taxonomy.get(rule.code)  # a rule for a code the taxonomy lacks is a bug, caught here
            hits.append(f"select trajectory_id, '{rule.code}' as code, evidence, rationale from ({rule.sql})")
            applicable.append(f"select trajectory_id, '{rule.code}' as code from ({rule.applicable})")
        store.execute("create or replace temp table _hits as " + " union all ".join(hits))
        store.execute("create or replace temp table _applicable as " + " union all ".join(applicable))
        _replace(store, CODER, taxonomy.version)
        store.execute(
            "insert into failure_codes (trajectory_id, code, taxonomy_version, coder, confidence, evidence_steps, rationale) "
            "select trajectory_id, code, ?, ?, 1.0, evidence, rationale from _hits", [taxonomy.version, CODER])
        codes = ", ".join(f"('{r.code}')" for r in RULES)
        store.execute(f"""
            insert into coding_status (trajectory_id, code, coder, taxonomy_version, status)
            select t.trajectory_id, c.code, ?, ?,
                   case when h.trajectory_id is not null then 'present'
                        when a.trajectory_id is not null then 'absent' else 'not_applicable' end
            from _tt t cross join (values {codes}) c(code)
            left join _hits h on h.trajectory_id = t.trajectory_id and h.code = c.code
            left join _applicable a on a.trajectory_id = t.trajectory_id and a.code = c.code""",
                      [CODER, taxonomy.version])
        report.trajectories = store.query("select count(*) from _tt")[1][0][0]
        for code, status, n in store.query(
                "select code, status, count(*) from coding_status where coder = ? and taxonomy_version = ? "
                "and trajectory_id in (select trajectory_id from _tt) group by all", [CODER, taxonomy.version])[1]:
            report.counts.setdefault(code, {"present": 0, "absent": 0, "not_applicable": 0})[status] = n
    return report


def _replace(store: Store, coder: str, version: str) -> None:
    for table in ("failure_codes", "coding_status"):
        store.execute(f"delete from {table} where coder = ? and taxonomy_version = ? "
                      f"and trajectory_id in (select trajectory_id from _tt)", [coder, version])
