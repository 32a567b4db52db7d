"""Every agent's own tool names and output conventions, read from Harbor trials shaped like the
published SkillsBench runs (gemini-cli, Claude Code via Bedrock, Terminus-2 and its older episode
logs) and Harbor's own converters (Codex, OpenHands)."""

import pytest

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.ingest import ingest
from curriculab.trajectory.actions import agent_key, normalise_tool_call, observe
from curriculab.trajectory.model_names import canonical_model


@pytest.fixture
def agents(store, fixtures):
    report = ingest(store, [fixtures / "harbor-agents"], workers=1)
    assert report.errors == []
    return store, report


def _steps(store, trial):
    # the status each call's output shows, on each of its steps (a part of `cd /app && pytest` has
    # none of its own: `test_a_chain_s_parts_have_no_status_of_their_own`)
    return store.query(
        """select tool_name, action, path, command, call_exit_code, call_error from steps
                          where trajectory_id = ? and source = 'agent' and tool_name is not null order by step_idx""",
        [trial],
    ).rows


def test_gemini_cli_tools_and_exit_codes(agents):
    store, _ = agents
    assert _steps(store, "pcap-stats__35QwY5n") == [
        ("list_directory", "read", "/root", "list_directory /root", None, None),
        ("read_file", "read", "/root/stats.csv", "read_file /root/stats.csv", None, None),
        ("write_file", "edit", "/root/analyze_pcap.py", "write_file /root/analyze_pcap.py", None, None),
        ("run_shell_command", "run", None, "python3 /root/analyze_pcap.py", 1, True),  # `Exit Code: 1`
        # `pip install scapy && rm -f …`: the line's `Exit Code: 0` is the call's, on both of its parts
        ("run_shell_command", "run", None, "pip install scapy", 0, False),
        ("run_shell_command", "edit", "/root/old_stats.csv", "rm -f /root/old_stats.csv", 0, False),
        ("replace", "edit", "/root/analyze_pcap.py", "replace /root/analyze_pcap.py", None, None),
        # "Error: (none)" on success is not an error
        ("run_shell_command", "run", None, "python3 /root/analyze_pcap.py", 0, False),
        ("read_file", "read", "/root/stats.csv", "read_file /root/stats.csv", None, None),
        ("google_web_search", "read", None, "google_web_search shannon entropy of ports", None, None),
    ]


def test_claude_code_tools_is_error_and_bash_exit_codes(agents):
    store, _ = agents
    assert _steps(store, "fix-parser__Kd82mQa") == [
        ("TodoWrite", "message", None, "TodoWrite", None, None),
        ("Glob", "read", "/app", "Glob **/*.py", None, None),
        ("Grep", "read", "/app/src", "Grep def parse", None, None),
        ("Read", "read", "/app/src/parse.py", "Read /app/src/parse.py", None, None),
        ("Edit", "edit", "/app/src/parse.py", "Edit /app/src/parse.py", None, None),
        ("Bash", "run", None, "cd /app", 1, True),
        ("Bash", "run", None, "python -m pytest -q", 1, True),  # "[exit_code] 1" and is_error
        ("Task", "other", None, "Task Investigate the failing test", None, None),  # a sub-agent: effect unknown
        ("Write", "edit", "/app/src/parse.py", "Write /app/src/parse.py", None, None),
        ("Bash", "run", None, "cd /app", 0, False),
        ("Bash", "run", None, "python -m pytest -q", 0, False),  # "[stdout]" and no "[exit_code]": 0
        ("WebFetch", "read", None, "WebFetch https://docs.python.org/3/", None, None),
    ]


def test_codex_tools_and_exit_codes(agents):
    store, _ = agents
    assert _steps(store, "add-retry__Cx9pLm2") == [
        ("exec_command", "read", "cmd/fetch.go", "cat cmd/fetch.go", 0, None),
        ("update_plan", "message", None, "update_plan", None, None),
        ("apply_patch", "edit", "cmd/fetch.go", "apply_patch cmd/fetch.go", None, None),
        ("exec_command", "run", None, "go build ./...", 1, True),
        ("exec_command", "run", None, "go test ./...", 1, True),  # "Process exited with code 1"
        ("shell", "edit", "cmd/fetch.go", "sed -i '1a import \"flag\"' cmd/fetch.go", 0, False),
        ("shell", "run", None, "go test ./...", 0, False),
    ]  # {"metadata": {"exit_code": 0}}


def test_openhands_tools_and_exit_codes(agents):
    store, _ = agents
    assert _steps(store, "crlf-parser__Oh3kZ7q") == [
        ("execute_bash", "run", None, "ls /workspace", 0, False),
        (
            "str_replace_editor",
            "read",
            "/workspace/parser.py",
            "str_replace_editor view /workspace/parser.py",
            None,
            None,
        ),
        ("think", "message", None, "think", None, None),
        (
            "str_replace_editor",
            "edit",
            "/workspace/parser.py",
            "str_replace_editor str_replace /workspace/parser.py",
            None,
            None,
        ),
        ("execute_bash", "run", None, "cd /workspace", 1, True),
        ("execute_bash", "run", None, "python -m pytest -q", 1, True),  # "[The command completed with exit code 1.]"
        ("finish", "complete", None, "finish", None, None),
    ]


def test_terminus_2_keystrokes_and_screen_text(agents):
    store, _ = agents
    assert _steps(store, "fix-parser__Tn44xQb") == [
        ("bash_command", "read", "/app/src/parse.py", "cat /app/src/parse.py", None, None),
        (
            "bash_command",
            "edit",
            "/app/src/parse.py",
            "sed -i 's/return x\\[0\\]/return x[0] if x else []/' /app/src/parse.py",
            None,
            None,
        ),
        ("bash_command", "run", None, "cd /app", None, False),  # the screen says "3 passed", for the line
        ("bash_command", "run", None, "python -m pytest -q", None, False),
        ("mark_task_complete", "complete", None, "mark_task_complete", None, None),
    ]


def test_a_chain_s_parts_have_no_status_of_their_own(agents):
    """`cd /app && python -m pytest -q` printed `[exit_code] 1` once, for the line: whether `cd` or the
    tests failed the log does not say, so neither part is given it (the line's is `call_exit_code`)."""
    store, _ = agents
    parts = store.query(
        "select command, exit_code, error_observed, call_exit_code, call_error, output is not null from steps "
        "where trajectory_id = 'fix-parser__Kd82mQa' and tool_name = 'Bash' order by step_idx limit 2"
    ).rows
    assert parts == [("cd /app", None, None, 1, True, False), ("python -m pytest -q", None, None, 1, True, True)]


def test_an_older_terminus_episode_list_is_read_into_steps(agents):
    store, report = agents
    assert _steps(store, "net-stats__Y6Xtg2z") == [
        ("bash_command", "run", None, "ls -la /root/", None, None),
        ("bash_command", "read", "/root/network_stats.csv", "head -50 /root/network_stats.csv", None, None),
        ("bash_command", "edit", "/root/stats.py", "cat > /root/stats.py << 'EOF'\nprint('ok')\nEOF", None, None),
        ("bash_command", "run", None, "python3 /root/stats.py", None, False),  # the next episode's screen: "ok"
        ("task_complete", "complete", None, "task_complete", None, None),
    ]
    assert store.query("select outcome, reward from trajectories where trajectory_id = 'net-stats__Y6Xtg2z'").rows == [
        ("passed", 1.0)
    ]
    assert any(
        "an older Terminus episode list (3 episodes), not ATIF: read its commands as steps" in w.reason
        for w in report.warnings
    )


def test_a_trial_with_an_unreadable_trajectory_keeps_its_verdict(agents):
    store, report = agents
    assert store.query(
        "select outcome, reward, n_steps from trajectories where trajectory_id = 'odd-log__Qq1aBc2'"
    ).rows == [("passed", 1.0, 0)]
    assert store.query("select count(*) from test_results where trajectory_id = 'odd-log__Qq1aBc2'").rows == [(1,)]
    (warning,) = [w.reason for w in report.warnings if "odd-log" in w.path]
    assert "not ATIF: a JSON object with keys events, version (field schema_version: Field required" in warning


def test_harness_faults_by_their_real_names(agents):
    store, _ = agents
    assert store.query(
        "select outcome, harness_error, exception_type from trajectories "
        "where trajectory_id = 'bgp-route-leak__ST67pMM'"
    ).rows == [("error", "environment_error", "RuntimeError")]


def test_one_model_one_name_and_agent_versions_apart(agents):
    store, _ = agents
    rows = store.query(
        "select trajectory_id, model, model_raw from trajectories where task_id = 'fix-parser' order by 1"
    ).rows
    assert rows == [
        ("fix-parser__Kd82mQa", "claude-haiku-4-5-20251001", "us.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("fix-parser__Tn44xQb", "claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001"),
    ]
    assert store.query("select agent, agent_version from runs where agent = 'gemini-cli' limit 1").rows == [
        ("gemini-cli", None)
    ]
    assert store.query("select agent, agent_version from runs where agent = 'claude-code'").rows == [
        ("claude-code", "2.0.31")
    ]


@pytest.mark.parametrize(
    "raw, canonical",
    [
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001"),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet-20240620"),
        ("anthropic/claude-sonnet-4-20250514", "claude-sonnet-4-20250514"),
        ("openrouter/google/gemini-2.5-pro", "gemini-2.5-pro"),
        ("claude-sonnet-4@20250514", "claude-sonnet-4-20250514"),
        ("gpt-5-mini", "gpt-5-mini"),
        (None, None),
    ],
)
def test_canonical_model_names(raw, canonical):
    assert canonical_model(raw) == canonical


def test_a_user_alias_file_joins_names_no_rule_can(tmp_path, monkeypatch):
    aliases = tmp_path / "aliases.yaml"
    aliases.write_text("prod-gpt4o-eastus: gpt-4o\n")
    monkeypatch.setenv("CURRICULAB_MODEL_ALIASES", str(aliases))
    assert canonical_model("azure/prod-gpt4o-eastus") == "gpt-4o" and canonical_model("prod-gpt4o-eastus") == "gpt-4o"


def test_a_user_table_extends_an_agent_without_code(tmp_path, monkeypatch):
    table = tmp_path / "tools.yaml"
    table.write_text(
        "agents:\n  my-agent:\n    aliases: [mine]\n    tools:\n      run_it: {action: shell, command: [line]}\n"
        "      peek: {action: read, path: [target]}\n    exit_code: ['rc=(\\d+)']\n"
    )
    assert normalise_tool_call("run_it", {"line": "echo x > out.txt"}, "mine")[0].action == "other"  # before: unknown
    monkeypatch.setenv("CURRICULAB_AGENT_TOOLS", str(table))
    assert agent_key("Mine@2.0") == "my-agent"
    (call,) = normalise_tool_call("run_it", {"line": "echo x > out.txt"}, "mine")
    assert (call.action, call.path) == ("edit", "out.txt")
    assert normalise_tool_call("peek", {"target": "a.py"}, "my-agent")[0].path == "a.py"
    assert observe("my-agent", "done rc=3").exit_code == 3
    assert normalise_tool_call("Read", {"file_path": "x.py"}, "claude-code")[0].action == "read"  # shipped tables stay


def test_unknown_tools_are_other_and_never_count_as_verification(agents):
    store, _ = agents
    run_rule_coders(store)
    # Task (other) after the last edit is no check; the Bash run after the Write is
    statuses = dict(
        store.query(
            "select trajectory_id, status from coding_status where code = 'skipped_verification' "
            "and trajectory_id in ('fix-parser__Kd82mQa', 'pcap-stats__35QwY5n')"
        ).rows
    )
    assert statuses == {"fix-parser__Kd82mQa": "absent", "pcap-stats__35QwY5n": "absent"}
    # gemini's framing ("Error: (none)") is not an observed error
    assert store.query(
        "select count(*) from failure_codes where code = 'no_plan_revision' and trajectory_id = 'pcap-stats__35QwY5n'"
    ).rows == [(0,)]


def test_the_report_says_what_was_not_coded_per_model(agents):
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.report import build_report, to_markdown

    store, _ = agents
    fit_store(store)
    store.record_inputs(
        errors=[
            {
                "path": "jobs/x/broken__1/result.json",
                "reason": "broken",
                "record": "broken__1",
                "field": None,
                "severity": "error",
                "source_format": "harbor",
            }
        ]
    )
    report = build_report(store)
    evidence = {e["model"]: e for e in report["evidence"]}
    assert (evidence["gpt-5-mini"]["without_actions"], evidence["gpt-5-mini"]["steps_lost_on_ingest"]) == (1, 1)
    assert evidence["gemini-3-flash-preview"]["without_actions"] == 1  # the trial whose environment never started
    assert "1 inputs were quarantined at ingest and are in no table here" in " ".join(report["findings"])
    assert any(
        f.startswith("gpt-5-codex: one attempt per task (1 tasks), so its ability is known only to ±")
        for f in report["findings"]
    )
    by_agent = {(a["agent"], a["model"]) for a in report["by_agent"]}
    assert {("claude-code", "claude-haiku-4-5-20251001"), ("terminus-2", "claude-haiku-4-5-20251001")} <= by_agent
    systems = {(a["agent"], a["model"]) for a in report["systems"]}
    assert {("claude-code", "claude-haiku-4-5-20251001"), ("terminus-2", "claude-haiku-4-5-20251001")} <= systems
    assert "## Systems: agent × model, in the leaderboard's order" in to_markdown(report)


def test_importers_name_harness_faults_from_one_vocabulary(store, fixtures):
    from curriculab.trajectory.model import HARNESS_ERRORS

    ingest(store, [fixtures / "harbor-agents", fixtures / "tb", fixtures / "harbor"], workers=1)
    named = {
        e
        for (e,) in store.query("select distinct harness_error from trajectories where harness_error is not null").rows
    }
    assert named and named <= set(HARNESS_ERRORS)
    from curriculab.analysis.ingest.common import AGENT_FAULTS
    from curriculab.analysis.ingest.tb import HARNESS_ERROR_OF_FAILURE_MODE

    assert AGENT_FAULTS <= set(HARNESS_ERRORS)  # the outcome rule speaks the same vocabulary
    assert {v for v in HARNESS_ERROR_OF_FAILURE_MODE.values() if v} <= set(HARNESS_ERRORS)
