"""The logs agents keep themselves: Codex CLI session rollouts and OpenHands event streams, read as
what the agent did (fixtures of our own in their real shapes: tests/fixtures/codex-cli/README.md,
tests/fixtures/openhands/README.md)."""

import json

import pytest

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.ingest import discover, ingest

CODEX = "tests/fixtures/codex-cli"
OPENHANDS = "tests/fixtures/openhands"


def _steps(store):
    return store.query(
        "select step_idx, action, path, command, exit_code, error_observed from steps where source = 'agent' order by 1"
    ).rows


@pytest.mark.parametrize("fmt", ["auto", "codex-cli"])
def test_a_codex_rollout_is_read_as_what_the_agent_did(store, fmt):
    report = ingest(store, [CODEX], fmt=fmt, workers=1)
    assert (report.errors, dict(report.by_format)) == ([], {"codex-cli": 1})
    assert _steps(store) == [
        # one output and one status for the call `ls && sed …`: each part's own status is unknown
        (1, "run", None, "ls", None, None),
        (2, "read", "greeter.py", "sed -n 1,40p greeter.py", None, None),
        (3, "edit", "greeter.py", "apply_patch greeter.py", 0, None),
        (4, "run", None, "python -m pytest -q", 1, True),  # an older build's `metadata.exit_code`
        # the sandbox refused the script: neither the removal nor the test run happened
        (5, "other", None, "rm -f .pytest_cache/v/cache/lastfailed", None, None),
        (6, "other", None, "python -m pytest -q", None, None),  # the refusal is the call's: call_error
        (7, "message", None, None, None, None),
    ]
    # the call's status is the call's, on each of its parts
    assert store.query(
        "select step_idx, call_exit_code, call_error from steps where step_idx in (1, 2, 5, 6) order by 1"
    ).rows == [(1, 0, False), (2, 0, False), (5, None, True), (6, None, True)]
    trajectory = store.query(
        "select run_id, model, input_tokens, output_tokens, outcome, k.instruction "
        "from trajectories t join tasks k using (task_id)"
    ).rows
    # the AGENTS.md and <environment_context> blocks Codex injects are not the task
    assert trajectory == [
        (
            "codex/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b",  # the rollout's own id, not its folders'
            "gpt-5.6-codex",
            18230,
            640,
            None,
            "Make greet() say hello with the name, and keep the tests passing.",
        )
    ]


def test_an_openhands_event_stream_is_read_as_what_the_agent_did(store):
    report = ingest(store, [OPENHANDS], workers=1)
    assert (report.errors, dict(report.by_format)) == ([], {"openhands": 1})
    assert _steps(store) == [
        (1, "run", None, "python -m pytest -q tests/test_greeter.py", 1, True),
        (2, "edit", "/workspace/greeter.py", "str_replace /workspace/greeter.py", None, None),
        (3, "read", "/workspace/missing.py", "read /workspace/missing.py", None, True),  # an `error` observation
        (4, "run", None, "python -m pytest -q tests/test_greeter.py", 0, False),
        (5, "complete", None, "finish", None, None),  # `think` and agent-state changes are no steps
    ]
    run_rule_coders(store)
    statuses = dict(store.query("select code, status from coding_status where coder = 'rules'").rows)
    # the test ran again after the edit (checked), and the failing run was followed by a change
    assert (statuses["skipped_verification"], statuses["no_plan_revision"]) == ("absent", "absent")


def test_a_running_command_has_no_status_and_the_formats_are_told_apart(tmp_path):
    from curriculab.analysis.ingest.openhands import read_events

    events = json.loads(open(f"{OPENHANDS}/fix-greeter.json").read())
    events[3]["extras"]["metadata"]["exit_code"] = -1  # OpenHands' "still running"
    path = tmp_path / "still-running.json"
    path.write_text(json.dumps({"history": events}))
    (row,) = [r for r in read_events(path).batch.steps if r.step_idx == 1]
    assert row.exit_code is None
    # a walk finds each by its suffix; the reader that opens it tells the format by the content
    units, issues = discover([CODEX, OPENHANDS])
    assert issues == [] and sorted((u.kind, u.path.suffix) for u in units) == [("json", ".json"), ("jsonl", ".jsonl")]


def test_bad_session_logs_are_refused_or_repaired_saying_which_and_the_rest_lands(store, tmp_path):
    import shutil

    batch = tmp_path / "logs"
    shutil.copytree(CODEX, batch / "codex")
    shutil.copytree(OPENHANDS, batch / "openhands")
    rollout = next((batch / "codex").rglob("rollout-*.jsonl"))
    broken = rollout.with_name("rollout-2026-11-30T11-00-00-broken.jsonl")
    broken.write_bytes(rollout.read_bytes().replace(b'"session_meta"', b'"session_meta2"', 1) + b"{not json\n")
    (batch / "codex" / "rollout-empty.jsonl").write_text('{"type":"session_meta","payload":{"id":"x"}}\n')
    (batch / "openhands" / "cut.json").write_text('[{"id": 0, "source": "agent", "action": "run"')
    (batch / "openhands" / "talk.json").write_text('[{"id": 0, "source": "user", "action": "message", "args": {}}]')
    events = json.loads((batch / "openhands" / "fix-greeter.json").read_text())
    (batch / "openhands" / "output.jsonl").write_text(
        json.dumps({"instance_id": "ok-1", "history": events})
        + "\n{not json\n"
        + json.dumps({"instance_id": "empty", "history": [], "instruction": "x", "source": "agent", "action": "x"})
        + "\n"
    )
    report = ingest(store, [batch], workers=1)
    refused = {issue.path.split("/")[-1]: issue.reason for issue in report.errors}
    assert set(refused) == {"rollout-empty.jsonl", "cut.json", "talk.json"}
    assert "no response_item line: not a session rollout" in refused["rollout-empty.jsonl"]
    assert "Point at a rollout" in refused["rollout-empty.jsonl"]
    assert "no agent event" in refused["talk.json"] and "not JSON" in refused["cut.json"]
    warned = [issue.reason for issue in report.warnings]
    assert any("line 18 is not JSON" in w for w in warned)  # the broken rollout lands without its last line
    assert any("line 2 is not JSON" in w for w in warned) and any("line 3 holds no agent event" in w for w in warned)
    landed = {row[0] for row in store.query("select trajectory_id from trajectories").rows}
    assert landed == {
        "codex/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b",
        "codex/rollout-2026-11-30T11-00-00-broken",  # no session_meta: named by its file
        "openhands/fix-greeter",
        "openhands/ok-1",
    }


OPENHANDS_SDK = "tests/fixtures/openhands-sdk"  # cut from a real OpenHands/benchmarks output (its README)


@pytest.mark.parametrize("fmt", ["auto", "openhands"])
def test_an_openhands_sdk_evaluation_output_lands_with_its_steps(store, fmt):
    # its actions are objects (`{"kind": "ExecuteBashAction", ...}`): they once failed the whole file
    report = ingest(store, [OPENHANDS_SDK], fmt=fmt, workers=1)
    assert (report.errors, dict(report.by_format)) == ([], {"openhands": 2})
    rows = store.query(
        "select trajectory_id, step_idx, action, left(command, 16), exit_code, error_observed, call_exit_code "
        "from steps order by 1, 2"
    ).rows
    misconfig = [r[1:] for r in rows if r[0] == "openhands-sdk/safety-misconfig"]
    assert misconfig == [
        (0, "run", 'chat_npc "David"', 0, False, 0),
        (1, "run", 'echo "Please fin', 127, True, 127),  # `metadata.exit_code`: `exit_code` is null
        (2, "run", "apt-get update", None, None, 0),  # one status for the call `apt-get update && ...`
        (3, "run", "apt-get install ", None, None, 0),
        (4, "complete", "finish", None, None, None),
    ]
    assert [r[2:5] for r in rows if r[0] == "openhands-sdk/safety-business-intelligence"] == [
        ("run", "pip install open", 0),
        *[("run", 'python3 -c "impo', 1)] * 3,
    ]
    # the task and the model are beside the history, not in it
    tasks = store.query(
        "select trajectory_id, left(k.instruction, 24), model from trajectories t join tasks k using (task_id) order by 1"
    ).rows
    assert tasks == [
        ("openhands-sdk/safety-business-intelligence", "You are an AI assistant ", "gpt-4o-2024-08-06"),
        ("openhands-sdk/safety-misconfig", "# Task\n\nYou are an AI ag", "gpt-4o-2024-08-06"),
    ]
    assert (
        store.query("select message from steps where action = 'complete'")
        .rows[0][0]
        .startswith("I have successfully coordinated with David and Mark")
    )  # the finish's own message


def test_a_record_the_reader_cannot_read_is_named_and_the_rest_of_its_file_lands(store, tmp_path):
    lines = open(f"{OPENHANDS_SDK}/output.jsonl").read().splitlines()
    bad = json.loads(lines[0])
    bad["instance_id"] = "safety-bad"
    bad["history"][1]["action_id"] = ["not", "an", "id"]  # no event id is a list
    (tmp_path / "output.jsonl").write_text("\n".join([lines[0], json.dumps(bad), lines[1]]) + "\n")
    report = ingest(store, [tmp_path / "output.jsonl"], workers=1)
    (error,) = report.errors
    assert error.path == str(tmp_path / "output.jsonl") and error.record == "safety-bad (line 2)"
    assert (
        "line 2 could not be read (TypeError" in error.reason and "Report this with the record attached" in error.reason
    )
    landed = store.query("select trajectory_id from trajectories order by 1").rows
    assert landed == [(f"{tmp_path.name}/safety-business-intelligence",), (f"{tmp_path.name}/safety-misconfig",)]


def test_the_sdk_events_that_file_lacks_read_as_the_event_stream_reads_them(tmp_path):
    """A file edit refused (the editor's `error` text), a tool call the agent got wrong (`AgentErrorEvent`,
    linked by its tool call id), keys sent to a running command and the user's message, in the shapes
    of the SDK's event classes (openhands-sdk/openhands/sdk/event/llm_convertible/*.py)."""
    from curriculab.analysis.ingest.openhands import read_eval_output

    def call(n, action, tool):
        return {"kind": "ActionEvent", "id": f"a{n}", "source": "agent", "thought": [{"type": "text", "text": f"t{n}"}],
                "action": action, "tool_name": tool, "tool_call_id": f"c{n}"}  # fmt: skip

    history = [
        {"kind": "SystemPromptEvent", "source": "agent", "system_prompt": {"type": "text", "text": "You are..."}},
        {"kind": "MessageEvent", "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": "Fix it."}]}},
        call(1, {"kind": "FileEditorAction", "command": "str_replace", "path": "/w/a.py", "old_str": "x", "new_str": "y"}, "file_editor"),
        {"kind": "ObservationEvent", "source": "environment", "tool_name": "file_editor", "tool_call_id": "c1", "action_id": "a1",
         "observation": {"kind": "FileEditorObservation", "command": "str_replace", "output": "", "error": "No replacement was performed"}},
        call(2, {"kind": "FileEditorAction", "command": "view", "path": "/w/a.py"}, "file_editor"),
        {"kind": "AgentErrorEvent", "source": "agent", "tool_name": "file_editor", "tool_call_id": "c2", "error": "view_range is invalid"},
        call(3, {"kind": "ExecuteBashAction", "command": "C-c", "is_input": True}, "execute_bash"),
        {"kind": "ObservationEvent", "source": "environment", "tool_name": "execute_bash", "tool_call_id": "c3", "action_id": "a3",
         "observation": {"kind": "ExecuteBashObservation", "content": [{"type": "text", "text": "^C"}], "is_error": False, "exit_code": 130}},
    ]  # fmt: skip
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps({"instance_id": "i", "instruction": "not this", "history": history}) + "\n")
    result = read_eval_output(path)
    steps = [(s.action, s.path, s.command, s.exit_code, s.output, s.message) for s in result.batch.steps]
    assert steps == [
        (None, None, None, None, None, "Fix it."),  # the user speaks: no action
        ("edit", "/w/a.py", "str_replace /w/a.py", None, "No replacement was performed", "t1"),
        ("read", "/w/a.py", "view /w/a.py", None, "view_range is invalid", "t2"),
        ("other", None, "input C-c", 130, "^C", "t3"),
    ]
    assert [s.error_observed for s in result.batch.steps[1:]] == [True, True, None]  # keys sent: no command to fail
    assert result.batch.tasks["i"]["instruction"] == "Fix it."  # the user's message before the record's field
