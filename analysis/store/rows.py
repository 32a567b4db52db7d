"""Map canonical models to the store's rows, column by column, for batched Arrow inserts."""

from __future__ import annotations

from collections import namedtuple
from datetime import UTC, datetime
from typing import Any

import orjson
import pyarrow as pa

from curriculab.trajectory.model import Run, Task

_JSON = pa.string()  # JSON travels as text; DuckDB casts it on insert
_TS = pa.timestamp("us", tz="UTC")

SCHEMAS: dict[str, pa.Schema] = {
    "tasks": pa.schema(
        [
            ("task_id", pa.string()),
            ("source", pa.string()),
            ("instruction", pa.string()),
            ("task_type", pa.string()),
            ("language", pa.string()),
            ("tier_authored", pa.string()),
            ("difficulty_authored", pa.string()),
            ("codebase_files", pa.int32()),
            ("n_milestones", pa.int32()),
            ("tags", pa.list_(pa.string())),
            ("metadata", _JSON),
        ]
    ),
    "runs": pa.schema(
        [
            ("run_id", pa.string()),
            ("agent", pa.string()),
            ("model", pa.string()),
            ("dataset", pa.string()),
            ("source_format", pa.string()),
            ("source_path", pa.string()),
            ("started_at", _TS),
            ("config", _JSON),
            ("agent_version", pa.string()),
        ]
    ),
    "trajectories": pa.schema(
        [
            ("trajectory_id", pa.string()),
            ("run_id", pa.string()),
            ("task_id", pa.string()),
            ("model", pa.string()),
            ("attempt", pa.int32()),
            ("outcome", pa.string()),
            ("reward", pa.float64()),
            ("harness_error", pa.string()),
            ("n_steps", pa.int32()),
            ("milestones_passed", pa.int32()),
            ("milestones_total", pa.int32()),
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("cost_usd", pa.float64()),
            ("started_at", _TS),
            ("ended_at", _TS),
            ("content_hash", pa.string()),
            ("source_format", pa.string()),
            ("source_path", pa.string()),
            ("model_raw", pa.string()),
            ("actions_logged", pa.bool_()),
            ("exception_type", pa.string()),
            ("reading", pa.int32()),
            ("agent_started_at", _TS),
            ("agent_ended_at", _TS),
            ("recording", pa.string()),
            ("panes", pa.string()),
        ]
    ),
    "steps": pa.schema(
        [
            ("trajectory_id", pa.string()),
            ("step_idx", pa.int32()),
            ("source", pa.string()),
            ("message", pa.string()),
            ("tool_name", pa.string()),
            ("action", pa.string()),
            ("path", pa.string()),
            ("command", pa.string()),
            ("output", pa.string()),
            ("exit_code", pa.int32()),
            ("output_truncated", pa.bool_()),
            ("raw", _JSON),
            ("ts", _TS),
            ("call_id", pa.string()),
            ("error_observed", pa.bool_()),
            ("read_full", pa.bool_()),
            ("call_exit_code", pa.int32()),
            ("call_error", pa.bool_()),
        ]
    ),
    "test_results": pa.schema(
        [
            ("trajectory_id", pa.string()),
            ("test_id", pa.string()),
            ("tier", pa.string()),
            ("milestone_idx", pa.int32()),
            ("passed", pa.bool_()),
            ("status", pa.string()),
            ("detail", pa.string()),
        ]
    ),
}


def _row_type(name: str, table: str) -> Any:
    """A table's row type, its fields the schema's columns in order: rows are built and read by
    column name, never by position (made from the Arrow schema, so a type checker sees Any)."""
    return namedtuple(name, SCHEMAS[table].names)


TaskRow = _row_type("TaskRow", "tasks")
RunRow = _row_type("RunRow", "runs")
TrajectoryRow = _row_type("TrajectoryRow", "trajectories")
StepRow = _row_type("StepRow", "steps")
TestResultRow = _row_type("TestResultRow", "test_results")
TestResultRow.__test__ = False  # a row type, not a pytest test

_MERGE_COLUMNS = {
    "tasks": [
        "source",
        "instruction",
        "task_type",
        "language",
        "tier_authored",
        "difficulty_authored",
        "codebase_files",
        "n_milestones",
    ],
    "runs": ["agent", "model", "dataset", "source_format", "source_path", "agent_version"],
}


def _merge_sql(table: str, key: str, json_column: str, list_column: str | None) -> str:
    # Sources know different things about the same task (a trial knows its instruction, a
    # task.toml its difficulty): an upsert keeps what is known and fills in what was missing.
    sets = [f"{c} = coalesce(excluded.{c}, {table}.{c})" for c in _MERGE_COLUMNS[table]]
    if table == "runs":  # a run started when its first trial did
        sets.append(
            "started_at = least(coalesce(excluded.started_at, runs.started_at), coalesce(runs.started_at, excluded.started_at))"
        )
    if list_column:
        sets.append(
            f"{list_column} = case when len(excluded.{list_column}) > 0 then excluded.{list_column} else {table}.{list_column} end"
        )
    sets.append(
        f"{json_column} = json_merge_patch(coalesce({table}.{json_column}, '{{}}'), coalesce(excluded.{json_column}, '{{}}'))"
    )
    return f"insert into {table} by name select * from _batch on conflict ({key}) do update set " + ", ".join(sets)


MERGE_SQL = {
    "tasks": _merge_sql("tasks", "task_id", "metadata", "tags"),
    "runs": _merge_sql("runs", "run_id", "config", None),
}


def as_utc(value: datetime | None) -> datetime | None:
    """`value` with a time zone: the store holds instants."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)  # naive times are taken as UTC


def json_text(value: Any) -> str | None:
    """`value` as JSON text for a JSON column (DuckDB casts it on insert)."""
    return None if value is None else orjson.dumps(value, default=str).decode()


def _merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Known values win over missing ones; a run keeps its earliest start."""
    if old is None:
        return new
    merged = dict(old)
    for key, value in new.items():
        if value not in (None, [], {}):
            merged[key] = value
    earlier, later = as_utc(old.get("started_at")), as_utc(new.get("started_at"))
    if earlier and later:
        merged["started_at"] = min(earlier, later)
    return merged


class RowBatch:
    """Rows for one transactional write: tasks and runs (merged by id) and trajectories (their
    rows built by ingest, `analysis.ingest.common.add_trajectory`)."""

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.trajectories: list[Any] = []  # TrajectoryRow
        self.steps: list[Any] = []  # StepRow
        self.test_results: list[Any] = []  # TestResultRow
        self.legacy_hashes: dict[str, str] = {}  # trajectory_id -> the raw-bytes hash older stores hold

    def __len__(self) -> int:
        return len(self.trajectories)

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    def extend(self, other: RowBatch) -> None:
        """Append another batch's rows, merging tasks and runs by id."""
        for task_id, task in other.tasks.items():
            self.tasks[task_id] = _merge(self.tasks.get(task_id), task)
        for run_id, run in other.runs.items():
            self.runs[run_id] = _merge(self.runs.get(run_id), run)
        self.trajectories.extend(other.trajectories)
        self.steps.extend(other.steps)
        self.test_results.extend(other.test_results)
        self.legacy_hashes.update(other.legacy_hashes)

    def add_task(self, task: Task) -> None:
        self.tasks[task.task_id] = _merge(self.tasks.get(task.task_id), task.model_dump())

    def add_run(self, run: Run) -> None:
        self.runs[run.run_id] = _merge(self.runs.get(run.run_id), run.model_dump())

    def per_trajectory(self) -> list[RowBatch]:
        """One batch per trajectory (with its steps, test results, task and run), then one with the
        tasks and runs no trajectory here names: to find the record a failed write cannot hold."""
        parts: dict[str, RowBatch] = {}
        for row in self.trajectories:
            part = parts.setdefault(row.trajectory_id, RowBatch())
            part.trajectories.append(row)
            if row.trajectory_id in self.legacy_hashes:
                part.legacy_hashes[row.trajectory_id] = self.legacy_hashes[row.trajectory_id]
            for key, source, target in ((row.task_id, self.tasks, part.tasks), (row.run_id, self.runs, part.runs)):
                if key in source:
                    target[key] = source[key]
        for row in self.steps:
            parts[row.trajectory_id].steps.append(row)
        for row in self.test_results:
            parts[row.trajectory_id].test_results.append(row)
        named_tasks = {row.task_id for row in self.trajectories}
        named_runs = {row.run_id for row in self.trajectories}
        rest = RowBatch()
        rest.tasks = {k: v for k, v in self.tasks.items() if k not in named_tasks}
        rest.runs = {k: v for k, v in self.runs.items() if k not in named_runs}
        return list(parts.values()) + ([rest] if rest.tasks or rest.runs else [])

    def to_arrow(self) -> dict[str, pa.Table]:
        tasks = [
            TaskRow(**{**{c: d[c] for c in TaskRow._fields}, "metadata": json_text(d["metadata"])})
            for d in self.tasks.values()
        ]
        runs = [
            RunRow(
                **{
                    **{c: d[c] for c in RunRow._fields},
                    "started_at": as_utc(d["started_at"]),
                    "config": json_text(d["config"]),
                }
            )
            for d in self.runs.values()
        ]
        data: dict[str, list[Any]] = {
            "tasks": tasks,
            "runs": runs,
            "trajectories": self.trajectories,
            "steps": self.steps,
            "test_results": self.test_results,
        }
        return {name: _table(rows, SCHEMAS[name]) for name, rows in data.items()}


def _table(rows: list[Any], schema: pa.Schema) -> pa.Table:
    """Rows of the table's row type (fields in schema order) as an Arrow table."""
    if not rows:
        return schema.empty_table()
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(col, type=f.type) for col, f in zip(columns, schema)], schema=schema)
