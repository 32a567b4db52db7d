"""The DuckDB store: schema, migrations, reads and writes. The only code that opens DuckDB.

Names load on first use: importing the package (the CLI does, for `DEFAULT_DB` and to recognise a
`StoreError`) does not load DuckDB, which commands that never open a store (`reward`) do not need.
"""

import importlib
from typing import TYPE_CHECKING, Any

DEFAULT_DB = "curriculab.duckdb"
"""The store a command opens without `--db` or `$CURRICULAB_DB`."""

_HOMES = {
    **dict.fromkeys(
        ("applied_migrations", "check_filter", "describe_tables", "row_count", "schema_version"), "catalog"
    ),
    **dict.fromkeys(("LATEST_VERSION", "MIGRATIONS", "Migration"), "schema"),
    **dict.fromkeys(
        (
            "QueryFailed",
            "QueryRejected",
            "QueryResult",
            "RecordRejected",
            "RunIdentity",
            "RunIdentity",
            "Selected",
            "IrtTask",
            "IrtModel",
            "IrtCheck",
            "PlanRow",
            "Store",
            "StoreBusy",
            "StoreError",
            "StoreMissing",
            "WriteResult",
            "default_db_path",
            "require_store",
        ),
        "store",
    ),
    "RowBatch": "rows",  # the row layout imports Arrow and the trajectory model: only writers need it
}

if TYPE_CHECKING:
    from curriculab.analysis.store.catalog import (
        applied_migrations,
        check_filter,
        describe_tables,
        row_count,
        schema_version,
    )
    from curriculab.analysis.store.rows import RowBatch
    from curriculab.analysis.store.schema import LATEST_VERSION, MIGRATIONS, Migration
    from curriculab.analysis.store.store import (
        IrtCheck,
        IrtModel,
        IrtTask,
        PlanRow,
        QueryFailed,
        QueryRejected,
        QueryResult,
        RecordRejected,
        RunIdentity,
        Selected,
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
    "Selected",
    "IrtTask",
    "IrtModel",
    "IrtCheck",
    "PlanRow",
    "RowBatch",
    "RunIdentity",
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
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
