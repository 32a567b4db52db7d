"""The DuckDB store: schema, migrations, reads and writes. The only code that opens DuckDB."""

from typing import Any

from curriculab.analysis.store.catalog import (
    applied_migrations,
    check_filter,
    describe_tables,
    row_count,
    schema_version,
)
from curriculab.analysis.store.schema import LATEST_VERSION, MIGRATIONS, Migration
from curriculab.analysis.store.store import (
    DEFAULT_DB,
    QueryFailed,
    QueryRejected,
    QueryResult,
    RecordRejected,
    Store,
    StoreBusy,
    StoreError,
    StoreMissing,
    WriteResult,
    default_db_path,
    require_store,
)

__all__ = [
    "DEFAULT_DB",
    "LATEST_VERSION",
    "MIGRATIONS",
    "Migration",
    "QueryFailed",
    "QueryRejected",
    "QueryResult",
    "RecordRejected",
    "RowBatch",
    "Store",
    "StoreBusy",
    "StoreError",
    "StoreMissing",
    "WriteResult",
    "applied_migrations",
    "check_filter",
    "default_db_path",
    "describe_tables",
    "require_store",
    "row_count",
    "schema_version",
]


def __getattr__(name: str) -> Any:
    if name == "RowBatch":  # the row layout imports Arrow and the trajectory model: only writers need it
        from curriculab.analysis.store.rows import RowBatch

        return RowBatch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
