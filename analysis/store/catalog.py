"""What a store holds, asked through its read door (`Store.query`): the schema version, applied
migrations, tables and their columns, row counts, and whether a filter is one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from curriculab.analysis.store.schema import TABLE_DOCS

if TYPE_CHECKING:
    from curriculab.analysis.store.store import Store


def schema_version(store: Store) -> int:
    """The newest migration applied (0 for a file no curriculab has migrated)."""
    exists = store.query(
        "select count(*) from information_schema.tables where table_name = 'schema_migrations'"
    ).scalar()
    if not exists:
        return 0
    return int(store.query("select coalesce(max(version), 0) from schema_migrations").scalar())


def applied_migrations(store: Store) -> list[tuple[int, str, Any]]:
    """(version, name, applied_at) of every applied migration, oldest first."""
    return store.query("select version, name, applied_at from schema_migrations order by version").rows


def describe_tables(store: Store) -> list[dict[str, Any]]:
    """Tables with their columns and a one-line description."""
    rows = store.query(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'main' order by table_name, ordinal_position"
    ).rows
    tables: dict[str, dict[str, Any]] = {}
    for table, column, dtype in rows:
        entry = tables.setdefault(table, {"table": table, "description": TABLE_DOCS.get(table, ""), "columns": []})
        entry["columns"].append({"name": column, "type": dtype})
    return list(tables.values())


def row_count(store: Store, table: str) -> int:
    """How many rows `table` holds."""
    return int(store.query(f'select count(*) from "{table}"').scalar())


def check_filter(store: Store, where: str, table: str = "trajectories") -> None:
    """Refuse `where` unless it is one boolean expression over `table`'s columns (a filter, never
    a statement): it is parsed inside `select ... where (...)`, which must stay one SELECT."""
    from curriculab.analysis.store.store import QueryFailed, StoreError

    sql = f"select 1 from {table} where ({where})"
    fix = f"Use {table}'s columns (`curriculab db schema` lists them)"
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise StoreError(
            f"--where {where!r} is not a filter on {table}: {str(exc).strip().splitlines()[0]}. {fix}"
        ) from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise StoreError(
            f"--where {where!r} is not a single filter expression. Give a condition on {table}'s "
            f"columns, e.g. \"outcome = 'failed'\""
        )
    try:
        store.query(f"explain {sql}")
    except QueryFailed as exc:
        raise StoreError(f"--where {where!r} is not a filter on {table}: {exc.cause}. {fix}") from None
