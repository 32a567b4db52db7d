"""The DuckDB store: schema, migrations, reads and writes. The only code that opens DuckDB."""

from analysis.store.rows import RowBatch
from analysis.store.schema import LATEST_VERSION, MIGRATIONS, Migration
from analysis.store.store import DEFAULT_DB, Store, StoreError, WriteResult, default_db_path

__all__ = ["DEFAULT_DB", "LATEST_VERSION", "MIGRATIONS", "Migration", "RowBatch", "Store", "StoreError",
           "WriteResult", "default_db_path"]
