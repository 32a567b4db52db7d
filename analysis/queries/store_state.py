"""The store's own state: quarantined inputs, the ingest manifest, the fingerprint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curriculab.analysis.store import Store

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import SqlRead, Statement, records


@SqlRead
def quarantined_inputs(store: Store) -> Statement:
    """Inputs refused at ingest, per source format. Columns: source_format, inputs."""
    return (
        """select coalesce(source_format, '(unknown)') as source_format, count(*) as inputs
                          from ingest_errors where severity = 'error' group by 1 order by 1""",
        [],
    )


def ingest_manifest(store: Store, under: list[str]) -> pd.DataFrame:
    """Inputs read cleanly before, at or under the given absolute paths.

    Columns: path, signature, kind, trajectories, seen_at.
    """
    return store.frame(MANIFEST_UNDER.format(columns="*"), [list(under), list(under)])


def manifest_signatures(store: Store, under: list[str]) -> dict[str, dict[str, Any]]:
    """By path, the signature and trajectory count of each input read cleanly before, at or under the
    given absolute paths: plain rows of what ingest compares, not a DataFrame (a re-ingest that
    reads nothing never imports pandas, and a timestamp per row costs more to fetch than the rest)."""
    rows = store.query(MANIFEST_UNDER.format(columns="path, signature, trajectories"), [list(under), list(under)]).rows
    return {path: {"signature": signature, "trajectories": trajectories} for path, signature, trajectories in rows}


MANIFEST_UNDER = """select {columns} from ingest_manifest m
                    where list_contains(?, path) or exists (select 1 from unnest(?) as u(root)
                                                            where starts_with(m.path, u.root || '/'))"""
"""`ingest_manifest`'s SQL (parameters: the roots, twice; `columns` to format in), for callers that
want plain rows of a few columns (a timestamp per row costs more to fetch than the rest)."""


def store_fingerprint(store: Store) -> dict[str, Any]:
    """What a plan was made from: row counts of the tables it reads and a hash of the trajectories'
    content hashes (the same store content gives the same fingerprint)."""
    frame = store.frame("""
        select (select count(*) from trajectories) as trajectories, (select count(*) from test_results) as test_results,
               (select count(*) from failure_codes) as failure_codes, (select count(*) from code_reliability) as reliability_rows,
               (select coalesce(sum(n_attempts), 0)::bigint from irt_tasks) as irt_attempts,
               (select md5(coalesce(string_agg(content_hash, ',' order by trajectory_id), '')) from trajectories) as content_hash""")
    return records(frame)[0]
