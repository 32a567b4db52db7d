"""Importers keep what the agent saw (issue 66, item 1), each on fixtures of our own in the real shapes
(tests/fixtures/sessions-one-folder/README.md, tests/fixtures/swe-bench-submissions/README.md):
Claude Code's `Exit code N`, a Codex command that yielded joined to its polls, a command line's
status kept as the call's, identities from the files' content, formats told by their first record
however long, SWE-bench submission verdicts, and SWE-agent commands its table does not know."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.hashes import READING
from curriculab.analysis.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ONE_FOLDER = FIXTURES / "sessions-one-folder"
SUBMISSIONS = FIXTURES / "swe-bench-submissions"
MINI = SUBMISSIONS / "20261201_mini-swe-agent_gpt-5-mini"
MULTI = SUBMISSIONS / "20261202_multi-role_sweagent-lite"
CLAUDE = "claude-code/5b2e9c41-8a7d-4f3e-b1c6-2d9e0f7a4c83"
CODEX = "codex/019ae1c2-3d4e-7f5a-8b6c-7d8e9f0a1b2c"


def _steps(
    store, trajectory_id, columns="step_idx, action, command, exit_code, error_observed, call_exit_code, call_error"
):
    return store.query(
        f"select {columns} from steps where trajectory_id = ? and source = 'agent' order by step_idx", [trajectory_id]
    ).rows


def test_a_claude_code_result_that_opens_exit_code_n_keeps_that_status(store):
    report = ingest(store, [ONE_FOLDER], workers=1)
    assert (report.errors, dict(report.by_format)) == ([], {"claude-code": 1, "codex-cli": 1})
    steps = {row[2]: row for row in _steps(store, CLAUDE)}
    assert steps["tre -L 1"][3:] == (127, True, 127, True)  # `Exit code 127` with is_error
    # a successful Bash result prints no status: none is made up, and no error is seen
    assert steps["whereis tree"][3:] == (None, None, None, False)
    # the fixture of tests/fixtures/claude-code: its failing run opens `Exit code 1` too
    ingest(store, [FIXTURES / "claude-code"], workers=1)
    assert store.query(
        "select exit_code, error_observed from steps where trajectory_id like 'claude-code/7f3c%' "
        "and tool_name = 'Bash' and exit_code is not null"
    ).rows == [(1, True)]


def test_a_command_line_s_status_is_the_call_s_never_its_last_part_s(store):
    ingest(store, [ONE_FOLDER], workers=1)
    rows = _steps(store, CLAUDE, "command, exit_code, error_observed, call_exit_code, call_error, output")
    javac, java = rows[0], rows[1]
    # `javac Main.java && java Main` failed as a line: javac's error, and java never ran
    assert (javac[:5], java[:5]) == (("javac Main.java", None, None, 1, True), ("java Main", None, None, 1, True))
    assert javac[5] is None and java[5].startswith("Exit code 1\nMain.java:3: error")  # the line's output, once
    # the read API (and the dashboard's step view) shows the line's status on the step with its output
    from curriculab.analysis import queries

    shown = queries.records(queries.trajectory(store, CLAUDE))
    # the first `java Main` never ran (javac failed: the line's 1); the second printed hello, no status
    assert [r["call_exit_code"] for r in shown if r["command"] == "java Main"] == [1, None]
    apt, whereis = rows[3], rows[4]
    # `apt-get … | tail -2; whereis tree`: neither part has a status of its own; the line printed both
    assert (apt[0], apt[1:3], whereis[0], whereis[1:3]) == (
        "apt-get install -y tree 2>&1 | tail -2",
        (None, None),
        "whereis tree",
        (None, None),
    )


def test_a_codex_command_that_yields_gets_the_status_its_polls_show(store):
    ingest(store, [ONE_FOLDER], workers=1)
    assert _steps(store, CODEX, "step_idx, action, command, exit_code, error_observed, raw->>'$.polls'") == [
        # `npm test` yielded; its second poll said `Process exited with code 1`: linked back to it
        (1, "run", "npm test", 1, True, None),
        # the polls read the running command's output where the agent saw it, in order
        (2, "read", "write_stdin session 4242 (npm test)", None, None, "call_t1"),
        (3, "read", "write_stdin session 4242 (npm test)", None, None, "call_t1"),
        (4, "edit", "apply_patch src/dates.js", 0, None, None),
        (5, "run", "npm test", 0, False, None),
        (6, "read", "write_stdin session 5150 (npm test)", None, None, "call_t2"),
        (7, "message", None, None, None, None),
    ]
    outputs = dict(store.query("select step_idx, output from steps where trajectory_id = ?", [CODEX]).rows)
    # the failing tests were seen at step 3, before the change at 4; the passing ones at 6, after it
    assert "fail 1" in outputs[3] and "fail 0" in outputs[6] and "Process running" in outputs[1]


def test_a_codex_status_the_output_does_not_print_comes_from_its_exec_command_end(store, tmp_path):
    """Builds whose outputs are the command's text alone record the status in an `event_msg`
    `exec_command_end` of the same `call_id` (`exit_code`, `aggregated_output`, `duration`)."""

    def line(kind, payload, second):
        return json.dumps({"timestamp": f"2026-12-02T10:00:{second:02d}.000Z", "type": kind, "payload": payload})

    rollout = tmp_path / "rollout-2026-12-02T10-00-00-019ae2aa-0000-7000-8000-000000000001.jsonl"
    call = {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "cargo test"})}
    rollout.write_text(
        "\n".join(
            [
                line("session_meta", {"id": "019ae2aa-0000-7000-8000-000000000001", "cwd": "/w"}, 0),
                line("response_item", {**call, "call_id": "call_a"}, 1),
                line(
                    "event_msg",
                    {"type": "exec_command_end", "call_id": "call_a", "exit_code": 101, "aggregated_output": "x"},
                    2,
                ),
                line(
                    "response_item", {"type": "function_call_output", "call_id": "call_a", "output": "error[E0308]"}, 3
                ),
            ]
        )
        + "\n"
    )
    assert ingest(store, [rollout], workers=1).errors == []
    assert store.query("select command, exit_code, error_observed from steps where action = 'run'").rows == [
        ("cargo test", 101, True)
    ]


def test_a_poll_naming_its_session_as_a_float_is_the_same_session(store, tmp_path):
    rollout = next(ONE_FOLDER.glob("rollout-*.jsonl"))
    # some writers give the poll's `session_id` as a number with a fraction (`{"session_id": 4242.0}`)
    text = rollout.read_text().replace('\\"session_id\\": 4242,', '\\"session_id\\": 4242.0,')
    assert "4242.0" in text
    (tmp_path / rollout.name).write_text(text)
    assert ingest(store, [tmp_path / rollout.name], workers=1).errors == []
    assert _steps(store, CODEX, "step_idx, exit_code")[0] == (1, 1)


def test_runs_and_identities_come_from_the_files_not_their_folder(store, tmp_path):
    report = ingest(store, [ONE_FOLDER], workers=1)
    assert report.errors == []
    runs = store.query(
        "select t.trajectory_id, t.run_id, r.agent, r.model from trajectories t join runs r using (run_id) order by 1"
    ).rows
    # a Claude Code session beside Codex rollouts, in one folder: each its own run and agent
    assert runs == [
        (CLAUDE, CLAUDE, "claude-code", "claude-sonnet-4-5-20250929"),
        (CODEX, CODEX, "codex", "gpt-5.1-codex"),
    ]
    # the same files in another folder are the same trajectories
    moved = shutil.copytree(ONE_FOLDER, tmp_path / "elsewhere" / "sessions")
    again = ingest(store, [moved], workers=1)
    assert (again.inserted, again.unchanged, again.errors) == (0, 2, [])


def test_a_resumed_claude_code_session_is_the_session_its_file_is_named_for(store, tmp_path):
    source = next(ONE_FOLDER.glob("5b2e*.jsonl"))
    resumed = "9d1f0c2e-7b3a-4e5d-8c6f-1a2b3c4d5e6f"
    lines = source.read_text().splitlines()
    # `claude --resume` starts the new file with the earlier session's lines, under their own id
    lines[5:] = [line.replace(source.stem, resumed) for line in lines[5:]]
    (tmp_path / f"{resumed}.jsonl").write_text("\n".join(lines) + "\n")
    assert ingest(store, [tmp_path / f"{resumed}.jsonl"], workers=1).errors == []
    assert store.query("select trajectory_id, task_id from trajectories").rows == [(f"claude-code/{resumed}", resumed)]


def test_an_openhands_evaluation_record_is_told_by_content_past_16_kib(store, tmp_path):
    events = json.loads((FIXTURES / "openhands" / "fix-greeter.json").read_text())
    record = {
        "instance_id": "greeter-1",
        "instance": {"problem_statement": "x" * 40_000},  # the first 16 KiB hold no `history`
        "instruction": "Fix greet().",
        "history": events,
    }
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, "instance_id": "greeter-2"}) + "\n")
    assert b'"history"' not in path.read_bytes()[:16384]
    report = ingest(store, [path], workers=1)
    assert (report.errors, dict(report.by_format)) == ([], {"openhands": 2})
    # an event list (.json) whose first event is long is told by its content too
    long_first = [{**events[0], "args": {**events[0].get("args", {}), "content": "y" * 20_000}}, *events[1:]]
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "session.json").write_text(json.dumps(long_first))
    assert dict(ingest(store, [tmp_path / "events"], workers=1).by_format) == {"openhands": 1}


def test_swe_bench_submissions_give_their_verdicts_and_tests(store):
    report = ingest(store, [SUBMISSIONS], workers=1)
    assert report.errors == [] and dict(report.by_format) == {"mini-swe-agent": 2, "swe-agent": 2}
    assert store.query("select trajectory_id, run_id, outcome from trajectories order by 1").rows == [
        ("20261201_mini-swe-agent_gpt-5-mini/astropy__astropy-7166", "20261201_mini-swe-agent_gpt-5-mini", "passed"),
        ("20261201_mini-swe-agent_gpt-5-mini/django__django-11133", "20261201_mini-swe-agent_gpt-5-mini", "failed"),
        ("20261202_multi-role_sweagent-lite/pydata__xarray-4094", "20261202_multi-role_sweagent-lite", "failed"),
        ("20261202_multi-role_sweagent-lite/sympy__sympy-20590", "20261202_multi-role_sweagent-lite", "passed"),
    ]
    # logs/<instance>/report.json (keyed by the instance, or its entry alone, as sb-cli publishes it):
    # each test once, FAIL_TO_PASS and PASS_TO_PASS
    assert store.query("select count(*) from test_results where trajectory_id like '%astropy__astropy-7166'").rows == [
        (2,)
    ]
    assert store.query(
        "select test_id, passed, detail from test_results where trajectory_id like '%django__django-11133' order by 1"
    ).rows == [
        ("tests/httpwrappers/tests.py::HttpResponseTests::test_iter_content", True, "PASS_TO_PASS"),
        ("tests/httpwrappers/tests.py::HttpResponseTests::test_memoryview_content", False, "FAIL_TO_PASS"),
    ]
    # a results.json published with trailing commas is read, and named
    assert {w.path for w in report.warnings} == {str(MULTI / "results.json")}
    assert all("not strict JSON (trailing commas)" in w.reason for w in report.warnings)


def test_a_results_file_that_cannot_be_read_is_named_and_its_trajectories_land(store, tmp_path):
    submission = shutil.copytree(MULTI, tmp_path / "20261202_multi-role_sweagent-lite")
    (submission / "results.json").write_text('{"resolved": ["sympy__sympy-20590"')  # cut short
    (submission / "trajs" / "broken__broken-1.traj").write_text('{"trajectory": [')
    report = ingest(store, [submission], workers=1)
    assert [Path(i.path).name for i in report.errors] == ["broken__broken-1.traj"]
    assert {Path(w.path).name for w in report.warnings} == {"results.json"}
    assert all("not JSON" in w.reason for w in report.warnings)
    assert store.query("select outcome from trajectories").rows == [(None,), (None,)]  # no verdict to read


def test_swe_agent_commands_its_table_does_not_know_are_other_and_mappable(store, tmp_path, monkeypatch):
    ingest(store, [MULTI], workers=1)
    steps = _steps(store, "20261202_multi-role_sweagent-lite/sympy__sympy-20590", "action, command")
    # the multi-line plan is one step, not one `run` per line; hand-offs and the reviewer's command
    # (documented in the prompt, not in the table) are neither changes nor checks
    assert [a for a, _ in steps] == ["other", "run", "other", "read", "edit", "other", "other", "complete"]
    assert steps[0][1].startswith("plan\n{") and steps[0][1].endswith("end_of_plan")
    assert "run" not in {a for a, c in steps if c in ("succeed", "review_patch")}
    # a user maps a command of their own in a table file of their own
    table = tmp_path / "tools.yaml"
    table.write_text("agents:\n  swe-agent:\n    tools:\n      review_patch: {action: read}\n")
    monkeypatch.setenv("CURRICULAB_AGENT_TOOLS", str(table))
    with Store(tmp_path / "mapped.duckdb") as mapped:
        assert ingest(mapped, [MULTI], workers=1).errors == []
        remapped = _steps(mapped, "20261202_multi-role_sweagent-lite/sympy__sympy-20590", "action, command")
    assert ("read", "review_patch") in remapped


BASELINE = "9ea0c77"
"""The commit before reading 3: a store it wrote is moved to the new identities by migration 18."""


def _baseline_tree(tmp_path: Path) -> Path | None:
    root = Path(__file__).resolve().parents[2]
    tree = tmp_path / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(root), "archive", BASELINE], capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def test_a_store_written_before_moves_to_the_new_identities_with_its_labels(tmp_path):
    tree = _baseline_tree(tmp_path)
    if tree is None:
        pytest.skip(f"{BASELINE} is not in this clone's history")
    folder = shutil.copytree(ONE_FOLDER, tmp_path / "project")
    shutil.copytree(MINI, tmp_path / "sub" / "20261201_mini-swe-agent_gpt-5-mini")
    db = tmp_path / "old.duckdb"
    script = f"""
from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store
from curriculab.analysis.coding import run_rule_coders
store = Store({str(db)!r})
ingest(store, [{str(folder)!r}, {str(tmp_path / "sub")!r}], workers=1)
run_rule_coders(store)
for tid, in store.query("select trajectory_id from trajectories").rows:
    store.query("insert into labels values (?, 'skipped_verification', 'ann', true, 'v5')", [tid])
print(sorted(store.query("select trajectory_id, agent from trajectories join runs using (run_id)").rows))
"""
    old = subprocess.run(
        [sys.executable, "-c", script],
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,  # not this checkout: the baseline's code alone
        capture_output=True,
        text=True,
    )
    assert old.returncode == 0, old.stderr
    # as the code before wrote it: keyed by folders, and the later file of the folder took the run's agent
    assert "('project/5b2e9c41-8a7d-4f3e-b1c6-2d9e0f7a4c83', 'codex')" in old.stdout
    assert "trajs/astropy__astropy-7166" in old.stdout

    store = Store(db)  # migrates
    moved = store.query(
        "select trajectory_id, run_id, agent from trajectories join runs using (run_id) order by 1"
    ).rows
    assert moved == [
        (
            "20261201_mini-swe-agent_gpt-5-mini/astropy__astropy-7166",
            "20261201_mini-swe-agent_gpt-5-mini",
            "mini-swe-agent",
        ),
        (
            "20261201_mini-swe-agent_gpt-5-mini/django__django-11133",
            "20261201_mini-swe-agent_gpt-5-mini",
            "mini-swe-agent",
        ),
        (CLAUDE, CLAUDE, "claude-code"),
        (CODEX, CODEX, "codex"),
    ]
    ids = {row[0] for row in moved}
    for table in ("steps", "coding_status", "labels"):
        held = {row[0] for row in store.query(f"select distinct trajectory_id from {table}").rows}
        assert held == ids, table
    assert store.query("select count(*) from runs where run_id not in (select run_id from trajectories)").rows == [(0,)]
    # the next ingest reads every file again (reading 3), and finds them stored under these ids
    again = ingest(store, [folder, tmp_path / "sub"], workers=1)
    assert (again.inserted, again.reread, again.errors) == (0, 4, [])
    assert store.query("select distinct reading from trajectories").rows == [(READING,)]
    assert store.query("select count(*) from labels").rows == [(4,)]
