"""The store: pinned tables, recorded migrations, read-only readers, atomic batches."""

import re
from pathlib import Path

import duckdb
import pytest

from curriculab.analysis.ingest.common import add_trajectory
from curriculab.analysis.store import (
    LATEST_VERSION,
    RowBatch,
    Store,
    StoreError,
    StoreMissing,
    describe_tables,
    row_count,
)
from curriculab.trajectory.model import Step, Trajectory

PINNED = {
    "tasks": [
        "task_id",
        "source",
        "instruction",
        "task_type",
        "language",
        "tier_authored",
        "difficulty_authored",
        "codebase_files",
        "n_milestones",
        "tags",
        "metadata",
    ],
    "runs": ["run_id", "agent", "model", "dataset", "source_format", "source_path", "started_at", "config"],
    "trajectories": [
        "trajectory_id",
        "run_id",
        "task_id",
        "model",
        "attempt",
        "outcome",
        "reward",
        "harness_error",
        "n_steps",
        "milestones_passed",
        "milestones_total",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "started_at",
        "ended_at",
        "content_hash",
    ],
    "steps": [
        "trajectory_id",
        "step_idx",
        "source",
        "message",
        "tool_name",
        "action",
        "path",
        "command",
        "output",
        "exit_code",
        "output_truncated",
        "raw",
        "ts",
    ],
    "test_results": ["trajectory_id", "test_id", "tier", "milestone_idx", "passed"],
    "failure_codes": [
        "trajectory_id",
        "code",
        "taxonomy_version",
        "coder",
        "confidence",
        "evidence_steps",
        "rationale",
        "coded_at",
    ],
    "labels": ["trajectory_id", "code", "annotator", "present", "taxonomy_version"],
    "plans": [
        "plan_id",
        "created_at",
        "target_model",
        "strategy",
        "allocation",
        "weights",
        "task_mix",
        "reasons",
        "config_yaml",
    ],
    "ingest_errors": ["path", "reason", "seen_at"],
}


def test_pinned_tables_and_columns_exist(store):
    schema = {t["table"]: [c["name"] for c in t["columns"]] for t in describe_tables(store)}
    for table, columns in PINNED.items():
        assert set(columns) <= set(schema[table]), (table, set(columns) - set(schema[table]))


def test_migrations_are_recorded_once(db_path):
    with Store(db_path) as s:
        rows = s.query("select version, name from schema_migrations").rows
    assert [r[0] for r in rows] == list(range(1, LATEST_VERSION + 1))
    with Store(db_path) as s:  # opening again applies nothing new
        assert s.migrate() == []
        assert row_count(s, "schema_migrations") == LATEST_VERSION


def test_readers_are_read_only(db_path):
    Store(db_path).close()
    with Store(db_path, read_only=True) as reader:
        with pytest.raises(StoreError, match="query failed: .*read-only"):
            reader.query("insert into labels values ('t', 'c', 'a', true, 'v1')")


def test_read_only_open_of_a_missing_store_says_how_to_create_one(tmp_path):
    with pytest.raises(StoreMissing) as err:
        Store(tmp_path / "nope.duckdb", read_only=True)
    assert isinstance(err.value, StoreError)
    assert str(err.value) == (
        f"no store at {tmp_path / 'nope.duckdb'}. Run `curriculab ingest PATH` to create one, "
        "or pass --db / set CURRICULAB_DB"
    )


@pytest.mark.parametrize("command", [["train", "--config", "plan.yaml"], ["loop", "--model", "m"], ["dashboard"]])
def test_every_command_that_needs_a_store_says_the_same_when_there_is_none(tmp_path, command):
    from click.testing import CliRunner

    from curriculab.cli import cli

    missing = tmp_path / "none.duckdb"
    (tmp_path / "plan.yaml").write_text("grpo: {}\n")
    result = CliRunner().invoke(
        cli, ["--db", str(missing), *(str(tmp_path / a) if a == "plan.yaml" else a for a in command)]
    )
    assert result.exit_code == 1 and not missing.exists()
    assert result.stderr == (
        f"Error: no store at {missing}. Run `curriculab ingest PATH` to create one, or pass --db / set CURRICULAB_DB\n"
    )


def test_reader_of_an_old_schema_is_told_to_migrate(db_path):
    con = duckdb.connect(str(db_path))
    con.execute("create table schema_migrations (version INTEGER, name VARCHAR, applied_at TIMESTAMPTZ)")
    con.close()
    with pytest.raises(StoreError, match=r"schema version 0, this curriculab needs \d+\. Run `curriculab db migrate"):
        Store(db_path, read_only=True)


def _trajectory(tid, outcome="passed", n_steps=3):
    t = Trajectory(trajectory_id=tid, run_id="r", task_id="k", model="m", outcome=outcome)
    t.steps = [Step(step_idx=i, source="agent", action="run", command=f"cmd {i}") for i in range(n_steps)]
    return t


def test_a_batch_lands_whole_or_not_at_all(store):
    good = RowBatch()
    add_trajectory(good, _trajectory("a"), "h1", "jsonl", "x")
    store.write_batch(good)
    bad = RowBatch()
    add_trajectory(bad, _trajectory("b"), "h2", "jsonl", "x")
    add_trajectory(
        bad, Trajectory.model_construct(**{**_trajectory("c").__dict__, "outcome": "won"}), "h3", "jsonl", "x"
    )
    with pytest.raises(StoreError, match="Constraint Error: CHECK constraint failed"):
        store.write_batch(bad)  # the CHECK on outcome fails: b must not land either
    assert store.query("select trajectory_id from trajectories").rows == [("a",)]
    assert row_count(store, "steps") == 3


def test_same_hash_is_a_no_op_and_other_content_is_a_conflict(store):
    first = RowBatch()
    add_trajectory(first, _trajectory("a"), "h1", "jsonl", "one.jsonl")
    assert store.write_batch(first).inserted == 1
    again = RowBatch()
    add_trajectory(again, _trajectory("a"), "h1", "jsonl", "one.jsonl")
    result = store.write_batch(again)
    assert (result.inserted, result.unchanged, result.conflicts) == (0, 1, [])
    changed = RowBatch()
    add_trajectory(changed, _trajectory("a", n_steps=5), "h9", "jsonl", "two.jsonl")
    result = store.write_batch(changed)
    assert result.inserted == 0 and result.conflicts == [("a", "two.jsonl", "one.jsonl", "jsonl")]
    assert row_count(store, "steps") == 3


def test_tasks_from_different_sources_merge(store):
    from curriculab.trajectory.model import Task

    b = RowBatch()
    b.add_task(Task(task_id="k", instruction="do it", tags=["x"]))
    store.write_batch(b)
    b = RowBatch()
    b.add_task(Task(task_id="k", difficulty_authored="hard", metadata={"category": "ops"}))
    store.write_batch(b)
    row = store.query("select instruction, difficulty_authored, tags, metadata::varchar from tasks").rows[0]
    assert row == ("do it", "hard", ["x"], '{"category":"ops"}')


def test_row_types_and_arrow_schemas_match_the_stored_tables(store):
    """The schema is declared once per pinned table (Arrow schema → row type); the migrations'
    DDL must agree with it column for column."""
    import pyarrow as pa

    from curriculab.analysis.store.rows import SCHEMAS

    kinds = {
        pa.string(): "VARCHAR",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
        pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
    }
    for table, schema in SCHEMAS.items():
        stored = {c["name"]: c["type"] for t in describe_tables(store) if t["table"] == table for c in t["columns"]}
        for field in schema:
            expected = "VARCHAR[]" if pa.types.is_list(field.type) else kinds[field.type]
            assert stored[field.name] in (expected, "JSON"), (table, field.name, stored[field.name], expected)


def test_a_failed_write_is_a_store_error_that_keeps_nothing(store):
    import pytest

    from curriculab.analysis.store import RecordRejected, RowBatch, StoreError
    from curriculab.trajectory.model import Step, Trajectory

    good = Trajectory(trajectory_id="ok", run_id="r", task_id="k", outcome="passed")
    bad = Trajectory(trajectory_id="bad", run_id="r", task_id="k", outcome="failed")
    bad.steps = [
        Step.model_construct(
            step_idx=0,
            source="agent",
            action="teleport",
            message=None,
            tool_name=None,
            path=None,
            command=None,
            output=None,
            exit_code=None,
            tool_failed=None,
            output_truncated=False,
            raw=None,
            ts=None,
            call_id=None,
        )
    ]
    batch = RowBatch()
    add_trajectory(batch, good, "h1", "jsonl", "x")
    add_trajectory(batch, bad, "h2", "jsonl", "x")
    with pytest.raises(StoreError) as err:
        store.write_batch(batch)
    assert isinstance(
        err.value, RecordRejected
    )  # a value of a record, not the store's state: ingest isolates the record
    assert str(err.value).startswith("the store refused a value: Constraint Error: CHECK constraint failed")
    assert row_count(store, "trajectories") == 0 and row_count(store, "steps") == 0


def test_a_select_from_outside_comes_back_typed_and_refusals_are_query_rejected(db_path):
    from curriculab.analysis import queries
    from curriculab.analysis.store import QueryRejected, QueryResult

    Store(db_path).close()
    result = queries.select_from(db_path, "select range as n from range(5)", max_rows=3)
    assert isinstance(result, QueryResult) and result == (["n"], [(0,), (1,), (2,)], True)
    assert queries.select_from(db_path, "select 1 as one", max_rows=3).truncated is False
    for sql in ("select 1; select 2", "delete from labels", "install httpfs"):
        with pytest.raises(QueryRejected):
            queries.select_from(db_path, sql)


def test_the_dashboard_opens_the_store_only_through_the_read_api():
    import ast

    root = Path(__file__).resolve().parents[2] / "dashboard"
    for source in root.rglob("*.py"):
        calls = [
            n
            for n in ast.walk(ast.parse(source.read_text()))
            if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == "Store"
        ]
        assert not calls, f"{source} opens Store itself: read through curriculab.analysis.queries"


def test_the_store_only_stores():
    # persistence (lifecycle, the reader hand-off, migrations, reads, one write per table family, and
    # the named statements that are the only SQL over its tables outside the read API: attribution
    # and the rule engine); a new method is a decision. The store writes what its callers decide:
    # canonical names, identities and the rules themselves live with their owners (ingest, taxonomy)
    public = {name for name, value in vars(Store).items() if callable(value) and not name.startswith("_")}
    assert public == {
        "check_tasks",
        "set_task_dataset",  # the dataset version task folders were imported at (issue #68)
        "readers_waiting",
        "close",
        "migrate",
        "query",
        "query_many",
        "query_one_select",
        "frame",
        "write_batch",
        "record_inputs",
        "run_statements",
        "replace_codes",
        "save_labels",
        "save_reliability",
        "save_plan",
        "save_training_metrics",
        "save_irt_fit",
        "model_names",
        "attribute",
        "number_attempts",
        "holds_unprefixed_hashes",
        "code_with_rules",
    }
    root = Path(__file__).resolve().parents[2] / "analysis" / "store"
    for source in root.glob("*.py"):
        if source.name == "schema.py":  # migrations are history: a data fix applied once stays recorded as it ran
            continue
        text = source.read_text()
        for rule in ("canonical_model", "trajectory.model_names", "trajectory.actions", "taxonomy.coders"):
            assert rule not in text, f"{source.name} holds a domain rule ({rule}): move it to ingest or coding"


def test_query_many_reads_side_by_side_in_order_and_names_a_refused_read(tmp_path):
    from curriculab.analysis.store import QueryFailed

    with Store(tmp_path / "s.duckdb") as store:
        statements = [(f"select {i} as n, range as r from range(?)", [i]) for i in range(12)]
        assert store.query_many(statements) == [store.query(sql, params) for sql, params in statements]
        with pytest.raises(QueryFailed, match="no_such_table"):
            store.query_many([("select 1", None), ("select * from no_such_table", None)])
        assert store.query("select 2") == (["2"], [(2,)])  # the connection is unharmed


def test_the_schemas_check_lists_are_the_trajectory_vocabularies(store):
    # a value the model accepts but the table refuses (or the reverse) would lose records at write time
    from curriculab.trajectory.vocabulary import ACTIONS, OUTCOMES, STEP_SOURCES, TIERS

    checks = {}
    for table, text in store.query(
        "select table_name, constraint_text from duckdb_constraints() where constraint_type = 'CHECK'"
    ).rows:
        column = re.search(r'\(\(?"?(\w+)"? IN', text).group(1)
        checks[(table, column)] = tuple(re.findall(r"'([^']*)'", text))
    assert checks[("trajectories", "outcome")] == OUTCOMES
    assert checks[("steps", "source")] == STEP_SOURCES
    assert checks[("steps", "action")] == ACTIONS
    assert checks[("test_results", "tier")] == TIERS
    assert checks[("coding_status", "status")] == ("present", "absent", "not_applicable")


def test_a_query_result_is_named_and_still_unpacks(tmp_path):
    from curriculab.analysis.store import IrtCheck, IrtModel, IrtTask, Selected

    with Store(tmp_path / "s.duckdb") as store:
        selected = store.query("select 7 as n, 'x' as s")
        assert isinstance(selected, Selected) and selected.columns == ["n", "s"] and selected.rows == [(7, "x")]
        columns, rows = selected  # a tuple still
        assert selected.scalar() == 7 and store.query("select 1 where false").scalar() is None
        store.save_irt_fit(
            [IrtTask("t1", 0.5, 0.1, 1.2, 0.3, 4, 0.25, "intermediate", "evaluation")],
            [IrtModel("m", 1.0, 0.2, 4, 0.25, "evaluation")],
            IrtCheck("evaluation", 2, 0.6, 0.7, 0.8, None),
        )
        stored = store.query("select task_id, discrimination, measured_tier from irt_tasks").rows
        assert stored == [("t1", 1.2, "intermediate")]
        assert store.query("select baseline_log_loss, irt_auc from irt_checks").rows == [(0.7, 0.8)]
