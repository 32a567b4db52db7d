"""The DuckDB store: the only code in curriculab that opens a database file."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import duckdb

from curriculab.analysis.store import DEFAULT_DB  # defined with the package: read without loading DuckDB
from curriculab.analysis.store.catalog import schema_version
from curriculab.analysis.store.schema import LATEST_VERSION, MIGRATIONS
from curriculab.trajectory.errors import CurriculabError

if TYPE_CHECKING:
    import pandas as pd

    from curriculab.analysis.store.rows import RowBatch
    from curriculab.analysis.store.rule_engine import RuleSql

Row = tuple[Any, ...]
"""One row as DuckDB returns it."""


class StoreError(CurriculabError):
    """A store problem a user can fix; the message says how."""


MARKER_STALE_S = 5.0
"""A waiting reader renews its marker at least every 0.5 s; one older than this is left by a dead reader."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


class StoreBusy(StoreError):
    """Another process holds the store (DuckDB lets one process open a file while it writes)."""


class QueryRejected(StoreError):
    """SQL from outside that a sealed read refuses: more than one statement, one that is not a SELECT,
    or one that reaches for files, the network, extensions or settings."""


class QueryResult(NamedTuple):
    """What one SELECT from outside returned."""

    columns: list[str]
    """Column names, in order."""
    rows: list[Row]
    """The rows (at most `max_rows` when a cap was given)."""
    truncated: bool
    """Whether the cap cut rows off."""


class Selected(NamedTuple):
    """What `Store.query` returned: a tuple, so `columns, rows = store.query(...)` still unpacks."""

    columns: list[str]
    """Column names, in order (empty for a statement that returns no rows)."""
    rows: list[Row]
    """The rows, as tuples."""

    def scalar(self) -> Any:
        """The first column of the first row (a count, a max), or None when there is no row."""
        return self.rows[0][0] if self.rows else None


class IrtTask(NamedTuple):
    """One task's row of a stored IRT fit (`irt_tasks`)."""

    task_id: str
    difficulty: float
    """b: the ability at which a pass is even odds."""
    difficulty_se: float
    discrimination: float
    """a: how sharply the pass probability rises with ability."""
    discrimination_se: float
    n_attempts: int
    pass_rate: float
    measured_tier: str | None
    """The tier the fitted difficulty puts the task in."""
    kind: str
    """Which attempts were fitted (evaluation, training, all)."""


class IrtModel(NamedTuple):
    """One model's row of a stored IRT fit (`irt_models`)."""

    model: str
    ability: float
    ability_se: float
    n_attempts: int
    pass_rate: float
    kind: str
    """Which attempts were fitted."""


class IrtCheck(NamedTuple):
    """A fit's held-out check (`irt_checks`): log loss and AUC of the fit against the baseline."""

    kind: str
    held_out: int
    """Attempts held out (each model × task's last, where it tried more than once)."""
    irt_log_loss: float
    baseline_log_loss: float
    irt_auc: float | None
    baseline_auc: float | None


class PlanRow(NamedTuple):
    """A plan as `plans` stores it: JSON columns as JSON text."""

    plan_id: str
    """The hash of the plan's content: the same plan saved again is kept once."""
    target_model: str
    strategy: str
    allocation: str
    weights: str
    task_mix: str
    reasons: str
    config_yaml: str
    """plan.yaml's text."""
    plan: str
    """The whole plan, as JSON."""
    kind: str
    """problems (a code-model plan) or tasks (an agent's terminal-task plan)."""


class RunIdentity(NamedTuple):
    """Who ran a run, as `Store.attribute` records it; None keeps what is stored."""

    agent: str | None
    """The agent (harness)."""
    model_raw: str | None
    """The model name as given."""
    model: str | None
    """Its canonical name (set with `model_raw`)."""


class RuleCoding(NamedTuple):
    """What `Store.code_with_rules` recorded."""

    counts: list[tuple[str, str, int]]
    """(code, status, trajectories) for each code and status."""
    trajectories: int
    """Trajectories coded."""


class StoreMissing(StoreError):
    """No store where one must already be (a mistyped --db, or nothing ingested yet)."""


def require_store(path: str | Path) -> str:
    """`path` as text when a store is there; StoreMissing saying how to make one otherwise."""
    if str(path) != ":memory:" and not Path(path).exists():
        raise StoreMissing(
            f"no store at {path}. Run `curriculab ingest PATH` to create one, or pass --db / set CURRICULAB_DB"
        )
    return str(path)


WAIT_NOTICE_S = 1.0
"""After this long waiting for the file, the store says so (through `on_wait`)."""


def _open_fix(path: str, message: str) -> str:
    """What to do about a store file that cannot be opened for a reason other than a lock."""
    if "not a valid DuckDB database" in message:
        return "That file is not a curriculab store; pass --db with another path (or move the file away)"
    if "Is a directory" in message:
        return "That path is a directory; pass --db with a file path such as ./curriculab.duckdb"
    if "Permission denied" in message or "permission" in message.lower():
        return "This user may not read or write it; fix its permissions or pass --db with another path"
    return "Check the path and that the file is a curriculab store, or pass --db with another path"


class RecordRejected(StoreError):
    """A write refused for what a record holds (a value out of a column's range, a broken
    constraint), not for the store's state: the records of the same batch can still be written."""


_DATA_ERRORS = (
    duckdb.ConstraintException,
    duckdb.ConversionException,
    duckdb.InvalidInputException,
    duckdb.OutOfRangeException,
    duckdb.TypeMismatchException,
)


def default_db_path() -> str:
    """`$CURRICULAB_DB` if set, else `./curriculab.duckdb`."""
    return os.environ.get("CURRICULAB_DB") or DEFAULT_DB


@dataclass
class WriteResult:
    """What one batch write did."""

    inserted: int = 0
    """Trajectories written."""
    unchanged: int = 0
    """Trajectories already stored with the same content hash (re-ingest is a no-op)."""
    conflicts: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(trajectory_id, new source path, stored source path, format) for ids stored with other content."""
    steps: int = 0
    """Steps written."""
    by_format: dict[str, int] = field(default_factory=dict)
    """Trajectories written per source format."""
    replaced: int = 0
    """Stored trajectories replaced by other content (`replace=True`), their codes dropped with them."""
    reread: int = 0
    """Stored trajectories of unchanged content read again by a newer reading (`hashes.READING`): their
    steps replaced, their codes dropped with them."""


SEALED_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
"""DuckDB settings for running SQL that comes from outside: the store and nothing else."""

READER_WAIT_S = 30.0
"""How long a reader waits for a writing process to step aside before giving up."""
WRITER_WAIT_S = 600.0
"""How long a writer that stepped aside waits for readers to finish before giving up."""


class QueryFailed(StoreError):
    """DuckDB refused a read (a typo, a missing column, a refused setting); `cause` is its reason."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"query failed: {cause}. Check the SQL; `curriculab db schema` lists tables and columns")
        self.cause = cause
        """DuckDB's own first line, for callers that word the error for their input."""


def _read_error(exc: duckdb.Error) -> QueryFailed:
    return QueryFailed(str(exc).strip().splitlines()[0])


def _fetch(connection: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None) -> Selected:
    """Column names and rows of one statement on `connection` (empty for one that returns none)."""
    try:
        cursor = connection.execute(sql, params or [])
    except duckdb.Error as exc:
        raise _read_error(exc) from None
    if cursor.description is None:
        return Selected([], [])
    return Selected([d[0] for d in cursor.description], cursor.fetchall())


_SCHEMA_SEEN: dict[tuple[Any, ...], int] = {}
"""Schema versions read by read-only opens, by the file's state (`Store._schema_version`)."""


class Store:
    """A curriculab DuckDB file. Writers migrate on open; readers open read-only.

    DuckDB lets one process at a time open a file (a writer excludes every other process, readers
    included). So that a report or the dashboard can read during a long ingest, readers and the
    ingest writer take turns: a reader that finds the file locked leaves a marker
    (`<db>.readers-waiting`) and retries; the writer checks for the marker between trajectories,
    commits what it has, closes, and reopens once the reader is done. Open the store per request
    and close it promptly: a reader holding it stalls the writer.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        create: bool = True,
        wait_s: float | None = None,
        sealed: bool = False,
        on_wait: Callable[[str], None] | None = None,
    ):
        """`create=False` refuses a missing file even for writing: commands that only add to a
        store (coding, agreement, fits) must not leave an empty one behind a mistyped `--db`.
        `wait_s`: how long to wait while another process holds the file. `sealed`: for SQL from
        outside (the `query` command, a dashboard console): no file or network access, no extension
        installs or loads, settings locked. `on_wait(notice)` is called once when opening has waited
        a second for another process (a command prints it, so a wait is never silent)."""
        self.path = str(path or default_db_path())
        self._on_wait = on_wait
        self.read_only = read_only
        self.wait_s = wait_s if wait_s is not None else (READER_WAIT_S if read_only else WRITER_WAIT_S)
        self._config: dict[str, str | bool | int | float | list[str]] = SEALED_CONFIG if sealed else {}
        if read_only or not create:
            require_store(self.path)
        self._con: duckdb.DuckDBPyConnection | None = None
        self.waited_for_writer = False
        """Whether opening found the file held (a writer was at work: what is read may be partial)."""
        self._connect(announce=read_only)
        if read_only:
            version = self._schema_version()
            if version < LATEST_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {version}, this curriculab needs {LATEST_VERSION}. "
                    f"Run `curriculab db migrate --db {self.path}`"
                )
        else:
            self.migrate()

    # -- lifecycle ---------------------------------------------------------------------------
    def _schema_version(self) -> int:
        """The schema version, read once per state of the file (its and its WAL's size and mtime):
        a dashboard opens the store read-only for every read, and the catalog query was a third of
        each open."""
        state: list[object] = [self.path]
        for candidate in (self.path, f"{self.path}.wal"):
            try:
                stat = os.stat(candidate)
                state.append((stat.st_mtime_ns, stat.st_size))
            except FileNotFoundError:
                state.append(None)
        key = tuple(state)
        if key not in _SCHEMA_SEEN:
            if len(_SCHEMA_SEEN) > 64:
                _SCHEMA_SEEN.clear()
            _SCHEMA_SEEN[key] = schema_version(self)
        return _SCHEMA_SEEN[key]

    @property
    def _marker(self) -> Path:
        return Path(f"{self.path}.readers-waiting")

    def _connect(self, announce: bool) -> None:
        """Open the file, waiting (up to `wait_s`) while another process holds it; a waiting
        reader announces itself so that a writer steps aside."""
        started = time.monotonic()
        deadline = started + self.wait_s
        pause = 0.02
        on_wait, waited = self._on_wait, False
        while True:
            try:
                self._con = duckdb.connect(self.path, read_only=self.read_only, config=self._config)
                break
            except duckdb.IOException as exc:
                message = str(exc).splitlines()[0]
                locked = "lock" in message.lower()
                if not locked or time.monotonic() >= deadline:
                    if announce:
                        self._marker.unlink(missing_ok=True)
                    raise (
                        StoreBusy(
                            f"cannot open {self.path}: {message}. Another process is using it (an ingest or a "
                            "long read); wait for it to finish, or use another --db"
                        )
                        if locked
                        else StoreError(f"cannot open {self.path}: {message}. {_open_fix(self.path, message)}")
                    ) from None
                if on_wait is not None and not waited and time.monotonic() - started >= WAIT_NOTICE_S:
                    waited = True
                    on_wait(
                        f"{self.path} is held by another process (an ingest or a long read); waiting up to "
                        f"{self.wait_s:.0f} s for it"
                    )
                self.waited_for_writer = True
                if announce:  # who waits, and since when: a marker whose reader died is ignored
                    self._marker.write_text(f"{os.getpid()} {time.time():.3f}\n")
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
        if announce:
            self._marker.unlink(missing_ok=True)

    @property
    def _db(self) -> duckdb.DuckDBPyConnection:
        """The connection (private: everything above the store goes through named methods and
        `analysis.queries`), reopened (waiting for readers) after the writer stepped aside."""
        if self._con is None:
            self._connect(announce=False)
        assert self._con is not None  # _connect opened it or raised
        return self._con

    def readers_waiting(self) -> bool:
        """Whether a reader in another process is waiting for this writer to step aside. A marker
        left by a reader that was killed or stopped waiting (its process is gone, or it has not
        renewed the marker for MARKER_STALE_S) is removed and ignored."""
        if self.read_only:
            return False
        try:
            text = self._marker.read_text()
            renewed = self._marker.stat().st_mtime
        except (FileNotFoundError, OSError):
            return False
        pid = int(text.split()[0]) if text.split() and text.split()[0].isdigit() else None
        if time.time() - renewed > MARKER_STALE_S or (pid is not None and not _alive(pid)):
            self._marker.unlink(missing_ok=True)
            return False
        return True

    def close(self) -> None:
        """Close the file (so that waiting readers can open it); a later use reopens it."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------
    def migrate(self) -> list[tuple[int, str]]:
        """Apply pending migrations, each in its own transaction; return those applied."""
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only. Open it for writing to migrate")
        self._db.execute(
            "create table if not exists schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
            "applied_at TIMESTAMPTZ DEFAULT current_timestamp)"
        )
        current = schema_version(self)
        applied = []
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            self._db.execute("begin transaction")
            try:
                self._db.execute(migration.sql)
                self._db.execute(
                    "insert into schema_migrations (version, name) values (?, ?)", [migration.version, migration.name]
                )
                self._db.execute("commit")
            except Exception:
                self._db.execute("rollback")
                raise
            applied.append((migration.version, migration.name))
        return applied

    # -- reads -------------------------------------------------------------------------------
    def query(self, sql: str, params: list[Any] | None = None) -> Selected:
        """Run SQL; return its column names and rows (`.scalar()` for a single value)."""
        return _fetch(self._db, sql, params)

    def query_many(self, statements: Sequence[tuple[str, list[Any] | None]], threads: int = 3) -> list[Selected]:
        """`query` of each statement, side by side on `threads` cursors of this connection (DuckDB
        runs a statement without the GIL; small reads leave cores idle one at a time), in order.
        A cursor sees what is committed: use it for reads, not inside a write."""
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()

        def run(statement: tuple[str, list[Any] | None]) -> Selected:
            if not hasattr(local, "cursor"):
                local.cursor = self._db.cursor()
                opened.append(local.cursor)
            return _fetch(local.cursor, *statement)

        opened: list[duckdb.DuckDBPyConnection] = []
        try:
            with ThreadPoolExecutor(max(1, min(threads, len(statements)))) as pool:
                return list(pool.map(run, statements))
        finally:
            for cursor in opened:
                cursor.close()

    def query_one_select(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout_s: float | None = None,
    ) -> QueryResult:
        """Run SQL from outside: exactly one SELECT (or EXPLAIN), on a sealed store (see `sealed`);
        anything else is a QueryRejected. `max_rows` keeps the first rows only (one more is fetched
        to tell truncation); `timeout_s` interrupts a statement that runs longer."""
        try:
            statements = duckdb.extract_statements(sql)
        except duckdb.Error as exc:
            raise StoreError(f"query failed: {str(exc).strip().splitlines()[0]}. Check the SQL") from None
        if len(statements) != 1:
            raise QueryRejected(
                f"query holds {len(statements)} statements; `curriculab query` runs exactly one. "
                "Send them one at a time"
            )
        kind = statements[0].type
        if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
            raise QueryRejected(
                f"query is a {kind.name} statement; `curriculab query` only reads (one SELECT). "
                "Change the store through curriculab's own commands"
            )
        timer = threading.Timer(timeout_s, self._db.interrupt) if timeout_s else None
        try:
            if timer:
                timer.start()
            relation = self._db.execute(sql)
            columns = [d[0] for d in relation.description or []]
            rows = relation.fetchall() if max_rows is None else relation.fetchmany(max_rows + 1)
        except duckdb.InterruptException:
            raise StoreError(
                f"query ran over {timeout_s:g} s and was stopped. Narrow it (a WHERE, a LIMIT) or raise the timeout"
            ) from None
        except duckdb.Error as exc:
            failed = _read_error(exc)
            if "disabled by configuration" in failed.cause or "Permission Error" in failed.cause:
                raise QueryRejected(
                    f"{failed.cause}. `curriculab query` reads the store only: no files, network, "
                    "extensions or settings"
                ) from None
            raise failed from None
        finally:
            if timer:
                timer.cancel()
        truncated = max_rows is not None and len(rows) > max_rows
        return QueryResult(columns, rows[:max_rows] if truncated else rows, truncated)

    def frame(self, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
        """Run a read and return a pandas DataFrame (the read API's one door to the connection)."""
        try:  # through Arrow: one copy, and no deprecated pandas paths
            return self._db.sql(sql, params=params or None).to_arrow_table().to_pandas()
        except duckdb.Error as exc:
            raise _read_error(exc) from None

    @contextmanager
    def _transaction(self) -> Iterator[Store]:
        """Everything inside lands together or not at all; a DuckDB failure becomes a StoreError
        that names the cause (a full disk, a read-only file) and the fix."""
        self._db.execute("begin transaction")
        try:
            yield self
            self._db.execute("commit")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, duckdb.Error):
                raise self._write_error(exc) from None
            raise

    def _rollback(self) -> None:
        try:
            self._db.execute("rollback")
        except duckdb.Error:  # the failure may have ended the transaction already
            pass

    def _write_error(self, exc: duckdb.Error) -> StoreError:
        message = str(exc).strip().splitlines()[0]
        if isinstance(exc, _DATA_ERRORS):
            return RecordRejected(f"the store refused a value: {message}")
        return StoreError(
            f"writing to {self.path} failed: {message}. Nothing from this write was kept; check free disk "
            "space and that the file is writable, then run the command again"
        )

    # -- writes ------------------------------------------------------------------------------
    def write_batch(
        self, batch: RowBatch, replace: bool = False, then: Sequence[tuple[str, Sequence[Any]]] = ()
    ) -> WriteResult:
        """Write tasks, runs and trajectories (with their steps and test results) atomically.

        A trajectory whose id is stored with the same content hash is skipped (a hash of raw bytes
        from an older store counts as the same when the batch's raw-bytes hash matches it, and is
        upgraded); one stored with a different hash is a conflict, returned for quarantine — or,
        with `replace`, the stored one, its steps, tests and codes are replaced. Everything lands
        in one transaction, so a crash leaves either the whole batch or none of it. `then`: statements
        (SQL, parameters) run after the rows of a batch with trajectories, in the same transaction,
        for rules the writer owns (ingest attributes attempts whose source names no model).
        """
        import pyarrow as pa  # only writes need Arrow and the row layout: reads start without them
        import pyarrow.compute as pc

        from curriculab.analysis.store.rows import MERGE_SQL

        result = WriteResult()
        try:
            tables = batch.to_arrow()
        except (pa.ArrowException, OverflowError, ValueError, TypeError) as exc:  # a value no column type holds
            raise RecordRejected(f"the store cannot hold a value: {exc}") from None
        traj = tables["trajectories"]
        with self._transaction():
            if traj.num_rows:
                ids = traj.select(["trajectory_id", "content_hash", "source_path", "source_format", "reading"])
                legacy = [batch.legacy_hashes.get(t) for t in ids["trajectory_id"].to_pylist()]
                self._db.register("_batch_ids", ids.append_column("legacy_hash", pa.array(legacy, pa.string())))
                stored = self._db.execute(
                    "select b.trajectory_id, b.content_hash = t.content_hash or b.legacy_hash = t.content_hash, "
                    "b.source_path, t.source_path, b.source_format, coalesce(t.reading, 1) < b.reading "
                    "from _batch_ids b join trajectories t using (trajectory_id)"
                ).fetchall()
                self._db.execute(
                    "update trajectories t set content_hash = b.content_hash from _batch_ids b "
                    "where t.trajectory_id = b.trajectory_id and t.content_hash = b.legacy_hash"
                )
                self._db.unregister("_batch_ids")
                skip, replaced = set(), []
                for trajectory_id, same, new_path, old_path, fmt, older_reading in stored:
                    if same and older_reading:  # the same content read by an older reading: its steps again
                        replaced.append(trajectory_id)
                        result.reread += 1
                    elif same:
                        skip.add(trajectory_id)
                        result.unchanged += 1
                    elif replace:
                        replaced.append(trajectory_id)
                    else:
                        skip.add(trajectory_id)
                        result.conflicts.append((trajectory_id, new_path, old_path, fmt))
                if replaced:
                    for name in ("trajectories", "steps", "test_results", "failure_codes", "coding_status"):
                        self._db.execute(f"delete from {name} where list_contains(?, trajectory_id)", [replaced])
                    result.replaced = len(replaced) - result.reread
                if skip:
                    keep = pa.array(sorted(skip), pa.string())
                    for name in ("trajectories", "steps", "test_results"):
                        tables[name] = tables[name].filter(pc.invert(pc.is_in(tables[name]["trajectory_id"], keep)))
            for name in ("tasks", "runs"):
                if tables[name].num_rows:
                    self._db.register("_batch", tables[name])
                    self._db.execute(MERGE_SQL[name])
                    self._db.unregister("_batch")
            for name in ("trajectories", "steps", "test_results"):
                if tables[name].num_rows:
                    self._db.register("_batch", tables[name])
                    self._db.execute(f"insert into {name} by name select * from _batch")
                    self._db.unregister("_batch")
            if traj.num_rows:
                for sql, params in then:
                    self._db.execute(sql, list(params))
        result.inserted = tables["trajectories"].num_rows - result.reread
        result.steps = tables["steps"].num_rows
        if result.inserted:
            formats = pc.value_counts(tables["trajectories"]["source_format"]).to_pylist()
            result.by_format = {f["values"]: f["counts"] for f in formats}
        return result

    def record_inputs(
        self, manifest: Sequence[tuple[str, str, str, int]] = (), errors: Iterable[dict[str, Any]] = ()
    ) -> None:
        """Record what ingest made of its inputs, together: `manifest` rows (path, signature, kind,
        trajectories) for inputs read cleanly, replacing earlier ones; `errors` (ingest_errors rows as
        dicts), each kept once (the same bad input seen again is the same problem, not a new one)."""
        errors = list(errors)
        if not manifest and not errors:
            return
        import pyarrow as pa

        with self._transaction():
            if manifest:
                # one statement over an Arrow table: DuckDB's executemany runs row by row
                latest = {row[0]: row for row in manifest}  # one row per path: a path given twice in one call
                self._db.register(
                    "_manifest",
                    pa.table(
                        [pa.array(column) for column in zip(*latest.values())],
                        names=["path", "signature", "kind", "trajectories"],
                    ),
                )
                self._db.execute(
                    "insert or replace into ingest_manifest (path, signature, kind, trajectories) "
                    "select path, signature, kind, trajectories from _manifest"
                )
                self._db.unregister("_manifest")
            if errors:
                self._db.register(
                    "_errors",
                    pa.Table.from_pylist(
                        errors,
                        schema=pa.schema(
                            [
                                ("path", pa.string()),
                                ("reason", pa.string()),
                                ("record", pa.string()),
                                ("field", pa.string()),
                                ("severity", pa.string()),
                                ("source_format", pa.string()),
                            ]
                        ),
                    ),
                )
                self._db.execute(
                    "insert into ingest_errors by name select distinct * from _errors e where not exists ("
                    "select 1 from ingest_errors i where i.path = e.path and i.reason = e.reason "
                    "and i.record is not distinct from e.record and i.severity = e.severity)"
                )
                self._db.unregister("_errors")

    def _insert(self, table: str, columns: Sequence[str], rows: Sequence[Row]) -> None:
        """Insert `rows` (tuples in `columns` order) in one statement over an Arrow table: DuckDB's
        executemany runs row by row, seconds for one checkpoint's rollout codes (bench/RESULTS.md, training)."""
        if not rows:
            return
        import pyarrow as pa

        self._db.register("_rows", pa.table([pa.array(list(column)) for column in zip(*rows)], names=list(columns)))
        try:
            self._db.execute(f"insert into {table} ({', '.join(columns)}) select {', '.join(columns)} from _rows")
        finally:
            self._db.unregister("_rows")

    # -- coding ------------------------------------------------------------------------------
    def model_names(self) -> list[tuple[str, str]]:
        """(model name as a source gave it, canonical name stored for it), each pair once."""
        from curriculab.analysis.store.attribution import MODEL_NAMES

        return [(raw, model) for raw, model in self.query(MODEL_NAMES).rows]

    def attribute(
        self,
        runs: Mapping[str, RunIdentity] | None = None,
        renames: Sequence[tuple[str, str]] = (),
    ) -> None:
        """In one transaction: set each run's identity (its agent and model, its attempts' model),
        then store the attempts of each (model name as given, canonical name) pair under that name."""
        from curriculab.analysis.store import attribution

        statements = [
            statement
            for run_id, who in (runs or {}).items()
            for statement in attribution.run_identity(run_id, who.agent, who.model_raw, who.model)
        ]
        statements += [statement for raw, model in renames for statement in attribution.renamed(raw, model)]
        self.run_statements(statements)

    def number_attempts(self) -> None:
        """Give every attempt without a number its order (by start time) within its run and task."""
        from curriculab.analysis.store.attribution import NUMBER_ATTEMPTS

        self.run_statements(NUMBER_ATTEMPTS)

    def holds_unprefixed_hashes(self, prefix: str) -> bool:
        """Whether any trajectory's content hash lacks `prefix` (a store written before it)."""
        return bool(
            self.query(
                "select exists (select 1 from trajectories where not starts_with(content_hash, ?))", [prefix]
            ).scalar()
        )

    def code_with_rules(
        self,
        rules: Sequence[RuleSql],
        steps: Sequence[tuple[str, Sequence[Any]]],
        *,
        where: str | None,
        taxonomy_version: str,
        coder: str,
        opaque_reason: str,
    ) -> RuleCoding:
        """Run the rule coders `rules` over the trajectories matching `where` (`_cs`, their steps, made
        by the `steps` statements), replacing `coder`'s earlier codes and statuses on them, in one transaction.
        A rule that needs actions abstains with `opaque_reason` where none were logged."""
        from curriculab.analysis.store.rule_engine import rule_statements

        results = self.run_statements(rule_statements(rules, steps, where, taxonomy_version, coder, opaque_reason))
        return RuleCoding([(code, status, int(n)) for code, status, n in results[-3]], int(results[-2][0][0]))

    def run_statements(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Row]]:
        """Run `statements` (SQL and its bound parameters) in order, in one transaction; each one's
        rows (empty for a statement that returns none). For engines that build their SQL elsewhere
        (the rule coders, `analysis.coding`): the store runs what it is given, all or nothing."""
        results = []
        with self._transaction():
            for sql, params in statements:
                cursor = self._db.execute(sql, list(params))
                results.append(cursor.fetchall() if cursor.description else [])
        return results

    def replace_codes(
        self, coder: str, taxonomy_version: str, trajectory_ids: list[str], findings: list[Row], statuses: list[Row]
    ) -> None:
        """Replace `coder`'s codes for `trajectory_ids`: `findings` rows (trajectory_id, code,
        confidence, evidence_steps, rationale), `statuses` rows (trajectory_id, code, status, reason)."""
        with self._transaction():
            for table in ("failure_codes", "coding_status"):
                self._db.execute(
                    f"delete from {table} where coder = ? and taxonomy_version = ? and list_contains(?, trajectory_id)",
                    [coder, taxonomy_version, trajectory_ids],
                )
            self._insert(
                "failure_codes",
                ("trajectory_id", "code", "taxonomy_version", "coder", "confidence", "evidence_steps", "rationale"),
                [(t, c, taxonomy_version, coder, p, e, r) for t, c, p, e, r in findings],
            )
            self._insert(
                "coding_status",
                ("trajectory_id", "code", "coder", "taxonomy_version", "status", "reason"),
                [(t, c, coder, taxonomy_version, s, r) for t, c, s, r in statuses],
            )

    def save_labels(self, annotator: str, taxonomy_version: str, labels: dict[tuple[str, str], bool | None]) -> None:
        """Store `annotator`'s labels {(trajectory_id, code): present}, replacing their earlier ones
        (present None: unsure)."""
        rows = [(t, c, annotator, p, taxonomy_version) for (t, c), p in labels.items()]
        with self._transaction():
            self._db.execute(
                "delete from labels l where l.annotator = ? and l.taxonomy_version = ? and "
                "list_contains(?, l.trajectory_id || chr(9) || l.code)",
                [annotator, taxonomy_version, [f"{t}\t{c}" for t, c, *_ in rows]],
            )
            self._insert("labels", ("trajectory_id", "code", "annotator", "present", "taxonomy_version"), rows)

    def save_reliability(
        self, coder: str, annotator: str, taxonomy_version: str, rows: list[Row], method: str = "labels"
    ) -> None:
        """Replace the agreement of `coder` with `annotator`: rows (code, n, kappa, f1, threshold,
        reliable, in_sample[, family]) — family the format family measured (absent or '': every
        format pooled); `method` says how it is known (labels, or verifier: by construction)."""
        with self._transaction():
            self._db.execute(
                "delete from code_reliability where coder = ? and annotator = ? and taxonomy_version = ?",
                [coder, annotator, taxonomy_version],
            )
            self._insert(
                "code_reliability",
                (
                    "coder",
                    "annotator",
                    "code",
                    "taxonomy_version",
                    "n",
                    "kappa",
                    "f1",
                    "threshold",
                    "reliable",
                    "in_sample",
                    "method",
                    "family",
                ),
                [
                    (coder, annotator, c, taxonomy_version, n, k, f, t, r, i, method, family or "")
                    for c, n, k, f, t, r, i, family in (tuple(row) + ("",) * (8 - len(row)) for row in rows)
                ],
            )

    def check_tasks(self, task_ids: list[str], note: str | None = None) -> None:
        """Mark tasks checked by a person after task health flagged them: they go back into
        difficulty fits and task mixes. Checking one again replaces its note."""
        with self._transaction():
            self._db.execute("delete from task_checks where list_contains(?, task_id)", [list(task_ids)])
            self._insert("task_checks", ("task_id", "note"), [(t, note) for t in dict.fromkeys(task_ids)])

    def set_task_dataset(self, task_ids: list[str], dataset: str) -> int:
        """Record on tasks the benchmark dataset and version their folders were imported at
        (`tasks.metadata.dataset`, e.g. `terminal-bench-core==0.1.1`), so a run that names another
        version can be told apart. Returns how many stored tasks it marked."""
        with self._transaction():
            marked = self._db.execute(
                "update tasks set metadata = json_merge_patch(coalesce(metadata, '{}'), json_object('dataset', ?)) "
                "where list_contains(?, task_id) returning task_id",
                [dataset, list(dict.fromkeys(task_ids))],
            ).fetchall()
        return len(marked)

    def save_plan(self, row: PlanRow) -> bool:
        """Store a plan. A plan id is its content's hash: saving the same plan again keeps the
        first. Returns whether it was new."""
        with self._transaction():
            (exists,) = self._db.execute("select count(*) from plans where plan_id = ?", [row.plan_id]).fetchall()[0]
            if not exists:
                self._insert("plans", PlanRow._fields, [row])
        return not exists

    def save_training_metrics(self, run_id: str, rows: list[tuple[str, int, str, float]]) -> None:
        """Record a training run's metrics: rows (run_id, step, name, value). A metric logged again at
        the same step (a resumed run) replaces the earlier value, so each is held once."""
        keys = sorted({f"{step}\t{name}" for _, step, name, _ in rows})
        with self._transaction():
            self._db.execute(
                "delete from training_metrics where run_id = ? and list_contains(?, step::varchar || chr(9) || name)",
                [run_id, keys],
            )
            self._insert("training_metrics", ("run_id", "step", "name", "value"), rows)

    def save_irt_fit(self, tasks: Sequence[IrtTask], models: Sequence[IrtModel], check: IrtCheck | None = None) -> None:
        """Replace the stored IRT fit: its tasks, its models and its held-out check (None where
        nothing could be held out). All land together or not at all."""
        with self._transaction():
            self._db.execute("delete from irt_tasks")
            self._db.execute("delete from irt_models")
            self._db.execute("delete from irt_checks")
            if check is not None:
                self._insert("irt_checks", IrtCheck._fields, [check])
            self._insert("irt_tasks", IrtTask._fields, list(tasks))
            self._insert("irt_models", IrtModel._fields, list(models))
