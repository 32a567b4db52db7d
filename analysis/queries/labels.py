"""Human labels and the labelling queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from curriculab.analysis.store import Store

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one

    from curriculab.taxonomy.taxonomy import Taxonomy
from curriculab.analysis.queries.core import _SYSTEM, EVERYTHING, Scope, _where


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


def labels_under(store: Store, taxonomy: Taxonomy) -> pd.DataFrame:
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


def coder_label_pairs(
    store: Store, coder: str, annotator: str, taxonomy: Taxonomy, *, in_sample_reason: str
) -> pd.DataFrame:
    """Per (trajectory, code) both judged by `coder` (not abstained) and labelled by `annotator`.

    Columns: trajectory_id, code, coded (the coder found it), labelled (the annotator did),
    in_sample (the coder's status says it learned from this label).
    """
    coded = store.frame(
        """select trajectory_id, code, status = 'present' as coded, coalesce(reason = ?, false) as in_sample
                           from coding_status where coder = ? and taxonomy_version = ? and status <> 'not_applicable'""",
        [in_sample_reason, coder, taxonomy.version],
    )
    mine = labels_under(store, taxonomy)
    mine = mine[mine["annotator"] == annotator].rename(columns={"present": "labelled"})
    pairs = coded.merge(mine, on=["trajectory_id", "code"])
    return pairs[["trajectory_id", "code", "coded", "labelled", "in_sample"]]


def abstained_on_labelled(store: Store, coder: str, annotator: str, taxonomy: Taxonomy) -> pd.DataFrame:
    """The (trajectory, code) pairs `annotator` labelled on which `coder` abstained
    (`not_applicable`): on a labelled present, a miss agreement cannot see; on any, coverage lost.
    Columns: trajectory_id, code, labelled."""
    mine = labels_under(store, taxonomy)
    mine = mine[mine["annotator"] == annotator].rename(columns={"present": "labelled"})
    abstained = store.frame(
        "select trajectory_id, code from coding_status where coder = ? and taxonomy_version = ? "
        "and status = 'not_applicable'",
        [coder, taxonomy.version],
    )
    return abstained.merge(mine[["trajectory_id", "code", "labelled"]], on=["trajectory_id", "code"])


def trajectory_labels(store: Store, trajectory_id: str) -> pd.DataFrame:
    """Human labels on one trajectory. Columns: annotator, code, present, taxonomy_version."""
    return store.frame(
        """select annotator, code, present, taxonomy_version from labels where trajectory_id = ?
                          order by annotator, code""",
        [trajectory_id],
    )


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
