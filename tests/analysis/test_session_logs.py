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
