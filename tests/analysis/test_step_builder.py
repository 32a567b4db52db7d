"""The step builder's rows are what the store would make of the same steps read whole as canonical
`Step` models (curriculab JSONL's path), though built without a model object per step."""

from datetime import UTC, datetime
from pathlib import Path

from curriculab.analysis.ingest.common import MAX_OUTPUT_CHARS, StepBuilder, step_row
from curriculab.analysis.store.rows import SCHEMAS, StepRow
from curriculab.trajectory.actions import NormalisedCall
from curriculab.trajectory.model import Step

TS = datetime(2025, 1, 15, 10, 30, tzinfo=UTC)


def _built() -> StepBuilder:
    builder = StepBuilder(path=Path("t.json"), record="r", source_format="atif")
    builder.message("user", "fix the bug")
    builder.calls(
        [NormalisedCall("run", None, "ls"), NormalisedCall("read", "a.py", "cat a.py")],
        tool_name="bash",
        raw={"arguments": {"command": "ls; cat a.py"}},
        output="a.py\nx = 1",
        message="looking",
        exit_code=0,
        call_id="1/c",
        ts=TS,
    )
    builder.calls(
        [NormalisedCall("run", None, "make")],
        tool_name="bash",
        raw={"arguments": {"command": "make"}},
        output="Traceback (most recent call last):\n  ...\n[output truncated]",
        ts=TS,
    )
    builder.calls(
        [NormalisedCall("read", "b.py", "Read b.py")],
        tool_name="Read",
        raw={"arguments": {"file_path": "b.py"}},
        output="1\tx",
        tool_failed=True,
    )
    return builder


def _as_models() -> list[Step]:
    """The same steps as the builder's, each a validated model, as a JSONL line would give them."""
    return [
        Step.model_validate(step)
        for step in [
            {"step_idx": 0, "source": "user", "message": "fix the bug"},
            {
                "step_idx": 1,
                "source": "agent",
                "message": "looking",
                "tool_name": "bash",
                "action": "run",
                "command": "ls",
                "call_exit_code": 0,
                "raw": {"arguments": {"command": "ls; cat a.py"}, "part": 0},
                "ts": TS,
                "call_id": "1/c",
            },
            {
                "step_idx": 2,
                "source": "agent",
                "tool_name": "bash",
                "action": "read",
                "path": "a.py",
                "command": "cat a.py",
                "output": "a.py\nx = 1",
                "call_exit_code": 0,
                "raw": {"arguments": {"command": "ls; cat a.py"}, "part": 1},
                "ts": TS,
                "call_id": "1/c",
            },
            {
                "step_idx": 3,
                "source": "agent",
                "tool_name": "bash",
                "action": "run",
                "command": "make",
                "output": "Traceback (most recent call last):\n  ...\n[output truncated]",
                "output_truncated": True,
                "raw": {"arguments": {"command": "make"}},
                "ts": TS,
                "call_id": "step-3",
            },
            {
                "step_idx": 4,
                "source": "agent",
                "tool_name": "Read",
                "action": "read",
                "path": "b.py",
                "command": "Read b.py",
                "output": "1\tx",
                "tool_failed": True,
                "raw": {"arguments": {"file_path": "b.py"}},
                "call_id": "step-4",
            },
        ]
    ]


def test_rows_are_the_store_columns():
    assert StepRow._fields == tuple(SCHEMAS["steps"].names)
    assert all(
        type(row) is StepRow and len(row) == len(StepRow._fields) and row.trajectory_id == "r" for row in _built().rows
    )


def test_built_rows_equal_the_rows_of_the_same_steps_read_as_models():
    rows = _built().rows
    assert rows == [step_row("r", step) for step in _as_models()]
    by_name = [row._asdict() for row in rows]
    # a Read its tool reported failed is an error too: errors are read on every step kind (issue #57)
    assert [r["error_observed"] for r in by_name] == [None, None, None, True, True]
    # `ls; cat a.py` exited 0 as a whole: the status is the call's, on both parts; neither part's own
    # status is known (the log does not separate them), and the last part is not given the line's
    assert [(r["exit_code"], r["call_exit_code"], r["call_error"]) for r in by_name[1:3]] == [(None, 0, False)] * 2
    assert [r["read_full"] for r in by_name] == [None, None, True, None, True]
    assert by_name[3]["output_truncated"] is True  # the harness said so


def test_an_output_that_arrives_later_decides_error_observed_then():
    builder = StepBuilder(path="t.json", record="r", source_format="inspect")
    builder.calls(
        [NormalisedCall("run", None, "pytest")], tool_name="bash", raw={"id": "c1"}, output=None, call_id="c1"
    )
    assert builder.last_action("c1") == 0 and builder.output_of(0) is None
    builder.set_output(0, "ok", tool_failed=True, raw={"id": "c1", "error": {"type": "timeout"}})
    row = builder.rows[0]._asdict()
    assert (
        row["output"] == "ok"
        and row["error_observed"] is True
        and row["raw"] == '{"id":"c1","error":{"type":"timeout"}}'
    )


def test_a_long_output_is_capped_with_a_warning_and_marked_truncated():
    builder = StepBuilder(path="t.json", record="r", source_format="atif")
    builder.calls([NormalisedCall("run", None, "yes")], tool_name="bash", raw=None, output="y\n" * MAX_OUTPUT_CHARS)
    row = builder.rows[0]._asdict()
    assert row["output_truncated"] is True and "characters omitted" in row["output"]
    assert [i.severity for i in builder.issues] == [
        "warning"
    ] and "step 0 output has 131,072 characters" in builder.issues[0].reason
