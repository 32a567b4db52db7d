"""Every supported format lands with outcomes, harness errors, per-test results and actions."""

import pytest

from curriculab.analysis.ingest import discover, ingest
from curriculab.analysis.ingest.hashes import READING
from curriculab.analysis.store import row_count


def rows(store, sql):
    return store.query(sql).rows


@pytest.fixture
def loaded(store, formats):
    report = ingest(store, formats, workers=1)
    assert report.errors == [] and report.warnings == []
    return store, report


def test_every_format_is_detected_and_counted(loaded):
    store, report = loaded
    assert dict(report.by_format) == {"harbor": 5, "tb": 10, "swe-agent": 2, "jsonl": 3, "atif": 1}
    assert report.tasks == 4  # two task.toml and two task.yaml directories
    assert row_count(store, "trajectories") == 21
    assert report.steps == row_count(store, "steps")


def test_harbor_trials_keep_verdict_tokens_tests_and_task_metadata(loaded):
    store, _ = loaded
    assert rows(
        store,
        "select outcome, reward, harness_error, input_tokens, output_tokens, cost_usd from trajectories "
        "where trajectory_id = 'fix-csv-parser__Hk3mQ2p'",
    ) == [("passed", 1.0, None, 9350, 456, 0.00185)]
    # an agent timeout with no reward is a failed attempt (as leaderboards count it), its harness error kept
    assert rows(
        store, "select outcome, harness_error from trajectories where trajectory_id = 'fix-csv-parser__Tm5bN8c'"
    ) == [("failed", "agent_timeout")]
    assert rows(
        store,
        "select test_id, tier, passed from test_results where trajectory_id = 'fix-csv-parser__Zr8tW4n' "
        "order by test_id",
    ) == [
        ("test_empty_line", "edge", True),
        ("test_escaped_quote", "complex", False),
        ("test_plain_row", "basic", True),
        ("test_quoted_comma", "intermediate", False),
    ]
    assert rows(
        store, "select milestones_passed, milestones_total from trajectories where task_id = 'add-retry-flag'"
    ) == [(1, 2)]
    assert rows(
        store,
        "select difficulty_authored, tier_authored, task_type, language, codebase_files, instruction like 'Fix `parse_row`%' "
        "from tasks where task_id = 'fix-csv-parser'",
    ) == [("medium", "intermediate", "bugfix", "python", 14, True)]
    assert rows(
        store,
        "select run_id, attempt from trajectories where task_id = 'fix-csv-parser' and run_id = '2026-10-02__09-00-00' "
        "order by attempt",
    ) == [("2026-10-02__09-00-00", 0), ("2026-10-02__09-00-00", 1)]


def test_terminus_keystrokes_are_split_and_outputs_attached(loaded):
    store, _ = loaded
    steps = rows(
        store,
        "select action, path, command, output is not null from steps "
        "where trajectory_id = 'fix-csv-parser__Hk3mQ2p' and source = 'agent' order by step_idx",
    )
    assert [(a, p) for a, p, _, _ in steps] == [
        ("run", None),
        ("run", None),
        ("read", "csvtool/parser.py"),
        ("edit", "csvtool/parser.py"),
        ("run", None),
        ("complete", None),
    ]
    assert steps[4][2] == "python -m pytest tests -q" and steps[4][3]  # the screen goes on the last command of the call
    assert not steps[3][3]
    raw = rows(
        store,
        "select raw->>'function_name', raw->>'part' from steps where trajectory_id = 'fix-csv-parser__Hk3mQ2p' "
        "and step_idx = 5",
    )
    assert raw == [("bash_command", "0")]


def test_claude_code_and_codex_tools_are_normalised(loaded):
    store, _ = loaded
    assert rows(
        store,
        "select tool_name, action, path from steps where trajectory_id = 'add-retry-flag__Pq7xV2k' "
        "and source = 'agent' order by step_idx",
    ) == [
        ("Read", "read", "/app/cmd/fetch.go"),
        ("Edit", "edit", "/app/cmd/fetch.go"),
        ("Bash", "run", None),
        ("Bash", "run", None),
        ("Bash", "run", None),  # cd && go build && go test
        (None, "message", None),
    ]
    assert rows(
        store,
        "select tool_name, action, path from steps where trajectory_id = 'fix-csv-parser__Cx2dE9f' "
        "and tool_name is not null order by step_idx",
    ) == [
        ("exec_command", "read", "csvtool/parser.py"),
        ("apply_patch", "edit", "csvtool/parser.py"),
        ("shell", "run", None),
    ]


def test_terminal_bench_runs_keep_harness_faults_apart(loaded):
    store, _ = loaded
    got = rows(
        store,
        "select split_part(trajectory_id, '/', 2), outcome, harness_error, attempt from trajectories "
        "where source_format = 'tb' and run_id = '2025-08-20__12-00-00' order by 1",
    )
    assert got == [
        ("fix-permissions.1-of-2.2025-08-20__12-00-00", "error", "install_failed", 0),  # is_resolved null
        ("fix-permissions.2-of-2.2025-08-20__12-00-00", "failed", "test_timeout", 1),
        ("hello-world.1-of-2.2025-08-20__12-00-00", "passed", None, 0),
        ("hello-world.2-of-2.2025-08-20__12-00-00", "failed", None, 1),
    ]
    assert rows(
        store, "select test_id, passed from test_results where trajectory_id like '%hello-world.2-of-2%' order by 1"
    ) == [("test_hello_file_content", False), ("test_hello_file_exists", True)]
    # commands.txt gives the commands, with no outputs (coders must abstain on output-based rules)
    assert rows(
        store,
        "select action, path, output from steps where trajectory_id like '%hello-world.1-of-2%' and source = 'agent' "
        "order by step_idx",
    ) == [("run", None, None), ("edit", "hello.txt", None), ("read", "hello.txt", None)]
    assert rows(
        store, "select tier_authored, difficulty_authored, task_type, tags from tasks where task_id = 'hello-world'"
    ) == [("basic", "easy", "file-operations", ["file-operations", "beginner"])]
    assert rows(store, "select model, dataset, agent from runs where source_format = 'tb' order by agent") == [
        ("anthropic/claude-sonnet-4-20250514", None, "mini-swe-agent"),  # no run_metadata.json: from the invocation
        (None, "terminal-bench-core", "openhands"),  # model_name null in run_metadata.json
        ("anthropic/claude-3-7-sonnet-latest", "terminal-bench-core", "terminus"),
    ]


def test_swe_agent_trajectories_take_the_verdict_from_the_report(loaded):
    store, _ = loaded
    assert rows(
        store,
        "select task_id, outcome, model, input_tokens, cost_usd from trajectories where source_format = 'swe-agent' "
        "order by 1",
    ) == [
        ("astropy__astropy-12907", "passed", "gpt-4o-2024-08-06", 120000, 0.42),
        ("django__django-11099", "failed", "gpt-4o-2024-08-06", 120000, 0.42),
    ]
    assert rows(
        store,
        "select action, path from steps where trajectory_id = 'gpt4o-run/astropy__astropy-12907' and source = 'agent' "
        "order by step_idx",
    ) == [
        ("read", None),  # find_file: a search of the repository
        ("read", "astropy/modeling/separable.py"),
        ("edit", "/astropy__astropy/astropy/modeling/separable.py"),
        ("run", None),
        ("complete", None),
    ]


def test_jsonl_and_standalone_atif(loaded):
    store, _ = loaded
    assert rows(
        store,
        "select trajectory_id, outcome, harness_error, n_steps from trajectories where source_format = 'jsonl' "
        "order by 1",
    ) == [
        ("rl-step120-p17-0", "passed", None, 3),
        ("rl-step120-p17-1", "failed", None, 2),
        ("rl-step120-p3-0", "error", "sandbox_error", 0),
    ]
    assert rows(
        store, "select exit_code, output from steps where trajectory_id = 'rl-step120-p17-1' and step_idx = 1"
    ) == [(1, "1 failed, 1 passed")]
    # ATIF v1.6 content parts are flattened to text
    assert rows(
        store, "select task_id, run_id, outcome, input_tokens from trajectories where source_format = 'atif'"
    ) == [("makefile-test-target", "openhands-smoke", "failed", 1900)]
    assert rows(
        store, "select message, output from steps where trajectory_id = 'atif-standalone-42' order by step_idx"
    )[:2] == [
        ("Make `make test` pass.", None),
        ("Running the tests.", "make: *** No rule to make target 'test'.  Stop."),
    ]


def test_reingest_is_a_no_op(loaded, formats):
    store, first = loaded
    counts = {t: row_count(store, t) for t in ("trajectories", "steps", "test_results", "tasks", "runs")}
    again = ingest(store, formats, workers=1)
    assert (again.inserted, again.unchanged, again.errors) == (0, first.inserted, [])
    assert {t: row_count(store, t) for t in counts} == counts


def test_a_store_read_by_an_older_reading_is_read_again_by_the_next_ingest(loaded, formats):
    """Migration 16: trajectories whose steps an older reading made (no `reading`) keep their content
    hash, yet the next ingest opens their files and replaces their steps and codes."""
    from curriculab.analysis.coding import run_rule_coders

    store, first = loaded
    run_rule_coders(store)
    fresh = rows(store, "select trajectory_id, step_idx, action, path, command from steps order by 1, 2")
    # as a store written before reading 2 holds them: old actions, no reading, codes from the old rules
    store.query("update trajectories set reading = null")
    store.query("update steps set action = 'run', path = null where action in ('read', 'edit')")
    store.query("delete from schema_migrations where version >= 16")
    # later ones (plans of two kinds, call status and identities, reliability per family, agent times)
    # apply again as no-ops
    assert [version for version, _ in store.migrate()] == [16, 17, 18, 19, 20]
    assert row_count(store, "ingest_manifest") == 0  # every input is opened again, none skipped
    again = ingest(store, formats, workers=1)
    assert (again.reread, again.inserted, again.unchanged, again.errors) == (first.inserted, 0, 0, [])
    assert rows(store, "select trajectory_id, step_idx, action, path, command from steps order by 1, 2") == fresh
    assert rows(store, "select count(*) from coding_status where coder = 'rules'") == [(0,)]  # to code again
    assert rows(store, "select distinct reading from trajectories") == [(READING,)]
    assert ingest(store, formats, workers=1).unchanged == first.inserted  # and then a no-op again


def test_explicit_format_restricts_what_is_read(formats):
    units, issues = discover(formats, "tb")
    assert sorted(u.kind for u in units) == ["tb", "tb", "tb", "tb-task", "tb-task"]
    assert [i.path for i in issues] == [str(p) for p in formats if p.name != "tb"]  # nothing tb-shaped there


@pytest.mark.slow
def test_parallel_workers_give_the_same_store_as_one(tmp_path, formats, monkeypatch):
    from curriculab.analysis.ingest import pipeline
    from curriculab.analysis.store import Store

    monkeypatch.setattr(pipeline, "_PARALLEL_MIN_UNITS", 1)
    snapshots = []
    for workers in (1, 2):
        with Store(tmp_path / f"w{workers}.duckdb") as s:
            ingest(s, formats, workers=workers)
            snapshots.append(
                s.query("select trajectory_id, n_steps, outcome, content_hash from trajectories order by 1").rows
            )
    assert snapshots[0] == snapshots[1]


def test_a_job_level_result_json_is_not_mistaken_for_a_trial(fixtures):
    job = fixtures / "harbor" / "jobs" / "2026-10-02__09-00-00"
    assert (job / "result.json").is_file() and (job / "config.json").is_file()
    units, issues = discover([job])
    assert sorted(u.path.name for u in units) == ["fix-csv-parser__Hk3mQ2p", "fix-csv-parser__Zr8tW4n"] and issues == []


def test_a_run_starts_when_its_first_trial_did(loaded):
    store, _ = loaded
    assert store.query(
        "select started_at = '2026-10-02T09:00:00Z'::timestamptz from runs where run_id = '2026-10-02__09-00-00'"
    ).rows == [(True,)]


def test_swe_agent_steps_are_read_as_the_agent_acted(store, fixtures):
    """A SWE-agent demonstration in the real shape (fixtures/swe-agent-demonstrations/README.md): its
    tools' refusals are errors on every step kind, a terminal warning in a command that ran is not,
    every edit names the file open before it, searches are reads, a submission keeps its flag, and a
    folder named `crypto` is no model."""
    report = ingest(store, [fixtures.parent / "fixtures" / "swe-agent-demonstrations"], workers=1)
    assert report.errors == []
    steps = rows(
        store,
        "select action, path, command, error_observed from steps where source = 'agent' order by step_idx",
    )
    assert [(a, p, e) for a, p, _, e in steps] == [
        ("read", None, True),  # goto with no file open: "No file open. Use the open command first."
        ("read", None, None),  # find_file: a search, not a run
        ("read", "chall.py", None),  # a file that raises ValueError is shown, not failed
        ("edit", "solve.py", None),  # create (the state before it names chall.py)
        ("edit", "/ctf__cube-root/solve.py", True),  # the linter refused it
        ("edit", "/ctf__cube-root/solve.py", True),  # the same edit, refused again
        ("edit", "/ctf__cube-root/solve.py", None),
        ("run", None, False),  # pwntools' _curses terminfo warning, and the flag printed
        ("run", None, True),  # EXECUTION TIMED OUT
        ("read", None, None),  # search_dir
        ("complete", None, True),  # Wrong flag!
        ("complete", None, None),
    ]
    assert [c for a, _, c, _ in steps if a == "complete"] == [
        "submit flag{cube_root}",
        "submit 'flag{cube_root_no_padding}'",
    ]
    assert rows(store, "select t.model, t.model_raw from trajectories t") == [("swe-agent (model unknown)", None)]
    # who ran it is said at ingest (`ingest --model`), never guessed from the folder
    from curriculab.analysis.ingest.attribution import Identity

    again = ingest(
        store,
        [fixtures.parent / "fixtures" / "swe-agent-demonstrations"],
        workers=1,
        replace=True,
        identities=[Identity(model="gpt-4-0613")],
    )
    assert again.errors == [] and rows(store, "select model from trajectories") == [("gpt-4-0613",)]


def test_a_swe_agent_run_folder_names_its_model_only_in_swe_agents_own_run_name():
    from curriculab.analysis.ingest.swe_agent import run_name_model

    # SWE-agent names a run `<model>__<data>__<config>__t-<temperature>__p-<top_p>__c-<cost>__install-<n>`
    assert run_name_model("gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1") == "gpt4"
    assert run_name_model("azure-gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1") == (
        "azure-gpt4"
    )
    assert [run_name_model(name) for name in ("crypto", "traj_example", "gpt4o-run", "replay__x__default")] == [
        None
    ] * 4


def test_mini_swe_agent_trajectories_are_read_with_their_report_and_detected(store, fixtures, tmp_path):
    """mini-swe-agent's `.traj.json` in both formats (fixtures in the real shapes: `mini-swe-agent-1`
    with ```bash blocks and SWE-bench's report.json beside it; `-1.1` with `extra.actions` and
    `extra.returncode`, out of steps)."""
    import json
    import shutil

    source = fixtures.parent / "fixtures" / "mini-swe-agent"
    report = ingest(store, [source], workers=1)
    assert report.errors == [] and report.inserted == 2
    assert rows(
        store,
        "select t.task_id, t.outcome, t.harness_error, t.model, r.agent, r.agent_version from trajectories t "
        "join runs r using (run_id) order by 1",
    ) == [
        ("astropy__astropy-14365", "passed", None, "claude-sonnet-4-5-20250929", "mini-swe-agent", "1.17.5"),
        ("sympy__sympy-20590", "failed", "agent_timeout", "gpt-5-mini", "mini-swe-agent", "2.0.0"),
    ]
    # each assistant message's one action, with the harness's return code; a format error is no action
    assert rows(
        store,
        "select s.action, s.exit_code, s.error_observed from steps s join trajectories t using (trajectory_id) "
        "where s.source = 'agent' and t.task_id = 'astropy__astropy-14365' order by s.step_idx",
    ) == [("run", 0, False), ("edit", 0, None), ("run", 0, False), ("message", None, None), ("complete", None, None)]
    assert rows(
        store,
        "select s.action, s.exit_code, s.error_observed from steps s join trajectories t using (trajectory_id) "
        "where s.source = 'agent' and t.task_id = 'sympy__sympy-20590' order by s.step_idx",
    ) == [("run", 0, False), ("run", 1, True), ("run", None, True)]  # the last one timed out and was killed
    # SWE-bench's per-test results, each test once
    tests = rows(store, "select test_id, passed from test_results order by 1")
    doc = json.loads(
        (source / "claude-sonnet-4-5__swebench-lite" / "astropy__astropy-14365" / "report.json").read_text()
    )
    status = doc["astropy__astropy-14365"]["tests_status"]
    assert {t for t, _ in tests} == {t for group in status.values() for t in group["success"] + group["failure"]}
    assert all(passed for _, passed in tests)
    # found by its content under another name, and by --format
    renamed = tmp_path / "run" / "trajectory.json"
    renamed.parent.mkdir()
    shutil.copy(
        source / "gpt-5-mini__swebench-verified" / "sympy__sympy-20590" / "sympy__sympy-20590.traj.json", renamed
    )
    assert [u.kind for u in discover([renamed])[0]] == ["json"]
    sniffed = ingest(store, [renamed], workers=1)
    assert sniffed.errors == [] and sniffed.inserted == 1
    assert [u.kind for u in discover([renamed], "mini-swe-agent")[0]] == ["mini-swe-agent"]


def test_a_claude_code_transcript_is_read_as_the_agent_acted(store, fixtures):
    """A Claude Code session (`<project>/<sessionId>.jsonl`, fixtures/claude-code/README.md), told apart
    from curriculab JSONL by its lines: each tool call through Claude Code's table, its result and
    `is_error` on its step, a sub-agent's lines left out, no verdict."""
    source = fixtures.parent / "fixtures" / "claude-code"
    assert [u.kind for u in discover([source])[0]] == ["jsonl"]  # a .jsonl: its first lines decide when read
    report = ingest(store, [source], workers=1)
    assert report.errors == [] and report.inserted == 1
    assert rows(
        store, "select t.model, t.outcome, r.agent, r.agent_version from trajectories t join runs r using (run_id)"
    ) == [("claude-sonnet-4-5-20250929", None, "claude-code", "2.1.63")]
    steps = rows(store, "select source, action, tool_name, path, call_error from steps order by step_idx")
    assert steps == [
        ("user", None, None, None, None),
        ("agent", "message", None, None, None),
        ("agent", "read", "Read", "/Users/dev/src/csvtool/csvtool/parse.py", None),
        ("agent", "run", "Bash", None, True),  # the tests failed: is_error
        ("agent", "edit", "Edit", "/Users/dev/src/csvtool/csvtool/parse.py", None),
        ("agent", "edit", "Bash", "csvtool/parse.py", False),  # `sed -i … && pytest`: an edit, then the run
        ("agent", "run", "Bash", None, False),
        ("agent", "message", None, None, None),
    ]
    assert not any(tool == "Grep" for _, _, tool, _, _ in steps)  # the sub-agent's Grep is its own
    forced = discover([source], "claude-code")[0]
    assert [u.kind for u in forced] == ["claude-code"]
