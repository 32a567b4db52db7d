"""Issue #68 items 4–7: two systems compared task by task, time against the tasks' limits, task
metadata joined to runs stored before it, and the agent's own terminal (with the steps an installed
agent prints there). Runs are written in Terminal-Bench's real per-trial shape
(`<submission>/<run>/<task>/<trial>/results.json`, as the leaderboard publishes cursor-cli's), task
folders as `task.yaml` (the shape of laude-institute/terminal-bench's tasks)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from curriculab.analysis import queries
from curriculab.analysis.compare import UnknownSystem, compare, known_systems, resolve, to_markdown
from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.transcript import mini_swe_agent_steps, terminal_files

FIXTURES = Path(__file__).parent.parent / "fixtures"
MINI_RUN = FIXTURES / "tb-transcripts" / "mini-terminal"
LIMIT = 600.0

# (task, outcome per system): "p" passed, "f" failed at the tests' verdict, "t" ran out of time
# (failure_mode agent_timeout), "-" not attempted; four attempts each
PLAN = {
    "a-only": ("pfpf", "ffff", "ffff"),
    "b-only": ("ffff", "pppf", "ffff"),
    "both": ("pppp", "pfff", "pppp"),
    "neither": ("ffff", "ffff", "ffff"),
    "a-alone": ("ppff", "----", "----"),
    "slow-task": ("tttt", "ffff", "tttt"),  # never solved, 8 of its 12 attempts out of time
}
SUBMISSIONS = ("20250801_terminus_claude-sonnet-4", "20250802_openhands_claude-sonnet-4", "20250803_terminus_gpt-5")
SONNET = "claude-sonnet-4-20250514"  # the canonical name of the folders' claude-sonnet-4
A, B, C = f"terminus · {SONNET}", f"openhands · {SONNET}", "terminus · gpt-5"


def _leaderboard(root: Path) -> Path:
    start = datetime(2025, 8, 1, 12, tzinfo=UTC)
    for s, submission in enumerate(SUBMISSIONS):
        for attempt in range(4):
            run = root / submission / f"run{attempt + 1}_2025-08-0{s + 1}__12-00-00"
            for t, (task, outcomes) in enumerate(PLAN.items()):
                verdict = outcomes[s][attempt]
                if verdict == "-":
                    continue
                name = f"{task}.1-of-1.2025-08-0{s + 1}__12-00-00"
                began = start + timedelta(hours=s, minutes=10 * attempt + t)
                seconds = LIMIT if verdict == "t" else 100.0 + 10 * attempt
                trial = {
                    "id": f"00000000-0000-4000-8000-{s:04d}{attempt:04d}{t:04d}",
                    "trial_name": name,
                    "task_id": task,
                    "instruction": f"Task text of {task}.",
                    "is_resolved": verdict == "p",
                    "failure_mode": "agent_timeout" if verdict == "t" else "unset",
                    "parser_results": {"test_outcome": "passed" if verdict == "p" else "failed"},
                    "recording_path": None,
                    "total_input_tokens": None,
                    "total_output_tokens": None,
                    "trial_started_at": began.isoformat(),
                    "trial_ended_at": (began + timedelta(seconds=seconds + 60)).isoformat(),
                    "agent_started_at": (began + timedelta(seconds=20)).isoformat(),
                    "agent_ended_at": (began + timedelta(seconds=20 + seconds)).isoformat(),
                    "test_started_at": None,
                    "test_ended_at": None,
                }
                folder = run / task / name
                folder.mkdir(parents=True)
                (folder / "results.json").write_text(json.dumps(trial, indent=4))
    return root


def _task_folders(root: Path) -> Path:
    for task in PLAN:
        folder = root / task
        folder.mkdir(parents=True)
        (folder / "task.yaml").write_text(
            f"instruction: |-\n  Task text of {task}.\nauthor_email: fixtures@curriculab.local\n"
            f"difficulty: {'hard' if task == 'slow-task' else 'medium'}\ncategory: system-administration\n"
            f"tags:\n  - sys-admin\nparser_name: pytest\nmax_agent_timeout_sec: {LIMIT}\n"
            "max_test_timeout_sec: 60.0\nrun_tests_in_same_shell: false\n"
        )
    return root


@pytest.fixture
def board(store, tmp_path):
    report = ingest(store, [_leaderboard(tmp_path / "board")], workers=1)
    assert report.errors == []
    return store


def test_compare_states_rates_difference_and_the_task_level_diff(board):
    c = compare(board, A, B)
    a, b = c.rates
    assert (a["system"], a["attempts"], a["passes"], a["tasks_solved"]) == (A, 24, 8, 3)
    assert (b["system"], b["attempts"], b["passes"], b["tasks_solved"]) == (B, 20, 4, 2)
    assert a["ci_low"] < a["pass_rate"] == 8 / 24 < a["ci_high"]
    verdicts = {t["task_id"]: t["verdict"] for t in c.tasks}
    assert verdicts == {
        "a-only": "A only",
        "b-only": "B only",
        "both": "both",
        "neither": "neither",
        "slow-task": "neither",
        "a-alone": "A tried alone",
    }
    assert c.counts["A only"] == c.counts["B only"] == c.counts["both"] == 1 and c.counts["neither"] == 2
    # the difference is over the five tasks both attempted (a-alone left out): 6/20 − 4/20, with a
    # task-resampled interval
    d = c.difference
    assert d["tasks"] == 5 and d["difference"] == pytest.approx(6 / 20 - 4 / 20)
    assert d["ci_low"] <= d["difference"] <= d["ci_high"]
    # how failures ended: A's four slow-task failures ran out of time, B's none
    endings = {r["system"]: r for r in c.endings}
    assert (endings[A]["timed_out"], endings[B]["timed_out"]) == (4, 0)
    text = to_markdown(c)
    assert f"# {A} vs {B}" in text and "| a-only | A only | 2/4 | 0/4 |" in text
    assert "Time limits unknown for some tasks" in text  # no task folder imported yet


def test_systems_resolve_by_shared_model_or_agent_and_unknown_names_list_the_known(board):
    assert known_systems(board) == sorted([A, B, C])
    assert resolve(board, "Terminus / Claude-Sonnet-4") == A
    assert resolve(board, "openhands", model="claude-sonnet-4") == B  # the same model, two agents
    assert resolve(board, "gpt-5", agent="terminus") == C  # the same agent, two models
    with pytest.raises(UnknownSystem) as error:
        resolve(board, "goose · o3")
    assert "goose · o3" in str(error.value) and A in str(error.value) and C in str(error.value)


def test_compare_command_prints_json_csv_and_names_known_systems(db_path, tmp_path, cli_run):
    from curriculab.analysis.store import Store

    with Store(db_path) as store:
        ingest(store, [_leaderboard(tmp_path / "board")], workers=1)
    result = cli_run("compare", "--agent", "terminus", "claude-sonnet-4", "gpt-5", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["a"], data["b"]) == (A, C)
    assert {t["task_id"]: t["verdict"] for t in data["tasks"]}["a-only"] == "A only"
    csv = cli_run("compare", A, B, "--csv")
    assert csv.output.splitlines()[0].startswith("task_id,a_trials,a_attempts,a_passes")
    assert "a-only," in csv.output
    bad = cli_run("compare", A, "nobody · nothing")
    assert bad.exit_code == 1 and "no system 'nobody · nothing'" in bad.output and B in bad.output


def test_time_against_limits_once_the_task_folders_are_imported(board, tmp_path):
    before = {r["system"]: r for r in queries.time_use.records(board)}
    assert before[A]["clock"] == "agent" and before[A]["with_limit"] == 0 and before[A]["median_share"] is None
    coverage = queries.task_metadata_coverage.records(board)
    assert {r["without_metadata"] for r in coverage} == {5, 6} and all(r["with_metadata"] == 0 for r in coverage)
    # the benchmark's task folders, imported after the runs: joined to the trajectories stored before
    assert ingest(board, [_task_folders(tmp_path / "tasks")], "tasks").tasks == len(PLAN)
    assert all(r["without_metadata"] == 0 for r in queries.task_metadata_coverage.records(board))
    after = {r["system"]: r for r in queries.time_use.records(board)}
    assert after[A]["with_limit"] == 24 and after[A]["near_limit"] == 4 and after[A]["timed_out"] == 4
    assert after[B]["near_limit"] == 0 and after[B]["max_s"] == pytest.approx(130.0)
    per_task = {r["task_id"]: r for r in queries.time_use.records(board, by="task")}
    assert per_task["slow-task"]["limit_s"] == LIMIT and per_task["slow-task"]["timed_out"] == 8
    # per-category views and authored tiers read the imported metadata
    assert {r["task_type"] for r in queries.attempts(board).to_dict("records")} == {"system-administration"}
    assert queries.authored_tier_counts(board) == {"complex": 1, "intermediate": 5}


def test_a_never_solved_task_that_mostly_ran_out_of_time_is_time_bound_not_broken(board):
    health = {r["task_id"]: r for r in queries.task_health.records(board)}
    assert health["slow-task"]["health"] == "never solved: time-bound"
    assert health["neither"]["health"] == "never solved: possibly broken"
    assert health["slow-task"]["flagged"]  # still kept out of fits until checked: it was never solved


def test_mini_swe_agent_steps_are_read_from_its_final_screen():
    trial = MINI_RUN / "2025-08-13__19-44-27" / "hello-world" / "hello-world.1-of-1.2025-08-13__19-44-27"
    steps = mini_swe_agent_steps((trial / "panes" / "post-agent.txt").read_text())
    assert [(s.number, s.command, s.exit_code) for s in steps] == [
        (1, "ls -la", 0),
        (2, 'echo "Hello, world!" > hello.txt', 0),
        (3, "cat hello.txt", 0),
        (4, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", None),
    ]
    assert steps[2].output == "Hello, world!" and steps[3].completes and not steps[0].completes
    assert steps[1].thought.startswith("The directory is empty")
    # a screen whose scroll-back lost the first steps is not read as the whole trajectory
    lost = MINI_RUN / "2025-08-13__19-44-27" / "fix-permissions" / "fix-permissions.1-of-1.2025-08-13__19-44-27"
    assert mini_swe_agent_steps((lost / "panes" / "post-agent.txt").read_text()) is None
    assert mini_swe_agent_steps("root@x:/app# openhands --task 'x'\n") is None
    assert terminal_files(trial) == (str(trial / "sessions" / "agent.cast"), str(trial / "panes" / "post-agent.txt"))
    assert terminal_files(lost) == (None, str(lost / "panes" / "post-agent.txt"))


def test_a_tb_trial_keeps_agent_times_its_terminal_and_printed_steps(store):
    from curriculab.analysis.coding import run_rule_coders

    assert ingest(store, [MINI_RUN], workers=1).errors == []
    rows = {
        r["task_id"]: r
        for r in store.frame(
            "select task_id, actions_logged, agent_started_at, agent_ended_at, recording, panes, harness_error "
            "from trajectories"
        ).to_dict("records")
    }
    hello, lost = rows["hello-world"], rows["fix-permissions"]
    assert (hello["agent_ended_at"] - hello["agent_started_at"]).total_seconds() == pytest.approx(135.25)
    assert hello["recording"].endswith("sessions/agent.cast") and hello["panes"].endswith("panes/post-agent.txt")
    assert hello["actions_logged"] and not lost["actions_logged"]  # a partial screen leaves it unread
    assert not isinstance(lost["recording"], str) and lost["harness_error"] == "agent_timeout"
    steps = store.frame(
        "select source, action, command, exit_code from steps s join trajectories t using (trajectory_id) "
        "where t.task_id = 'hello-world' and s.source = 'agent' order by step_idx"
    ).to_dict("records")
    assert [(s["action"], s["command"]) for s in steps] == [
        ("run", "ls -la"),
        ("edit", 'echo "Hello, world!" > hello.txt'),
        ("read", "cat hello.txt"),
        ("complete", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    # behavioural coders now judge the run: it checked its file after the last change
    run_rule_coders(store)
    status = store.frame(
        "select status from coding_status c join trajectories t using (trajectory_id) "
        "where t.task_id = 'hello-world' and c.code = 'skipped_verification' and c.coder = 'rules'"
    )["status"].tolist()
    assert status == ["absent"]


def test_harbor_agent_execution_timings_are_the_agents_own(store):
    job = FIXTURES / "harbor" / "jobs" / "2026-10-03__14-30-00"
    ingest(store, [job], workers=1)
    stored = store.frame(
        "select date_diff('second', agent_started_at, agent_ended_at) as s from trajectories "
        "where trajectory_id = 'fix-csv-parser__Tm5bN8c'"
    )["s"].tolist()
    assert stored == [606]  # agent_execution 14:40:00 → 14:50:06 in its result.json


def test_tasks_import_at_the_runs_dataset_version_joins_runs_stored_before(db_path, cli_run):
    """A run that names terminal-bench-core 0.1.1, its task folders imported after it: metadata
    reaches its trajectories; imported as another version, the run is named as mismatched."""
    run, folders = FIXTURES / "tb" / "2025-08-20__12-00-00", FIXTURES / "tb" / "tasks"
    assert cli_run("ingest", str(run)).exit_code == 0
    first = cli_run("tasks", "import", str(FIXTURES / "tb" / "tasks" / "hello-world"), "--json")
    data = json.loads(first.stdout)
    assert data["tasks"] == 1 and data["marked"] == 0
    assert data["runs_without_metadata"] == [
        "run 2025-08-20__12-00-00 (terminus · claude-3-7-sonnet-20250219, terminal-bench-core==0.1.1): "
        "1 of 2 tasks have no metadata (fix-permissions)"
    ]
    wrong = json.loads(
        cli_run("tasks", "import", str(folders), "--dataset", "terminal-bench-core==0.2.0", "--json").stdout
    )
    assert wrong["marked"] == 2 and wrong["runs_without_metadata"] == [
        "run 2025-08-20__12-00-00 (terminus · claude-3-7-sonnet-20250219, terminal-bench-core==0.1.1): "
        "2 of its tasks were imported as terminal-bench-core==0.2.0, not the version the run names"
    ]
    right = cli_run("tasks", "import", str(folders), "--dataset", "terminal-bench-core==0.1.1")
    assert right.exit_code == 0 and "2 task(s) recorded as terminal-bench-core==0.1.1." in right.stdout
    assert "no metadata" not in right.stderr and "not the version" not in right.stderr
    from curriculab.analysis.store import Store

    with Store(db_path, read_only=True) as store:
        limits = {r["task_id"]: r["limit_s"] for r in queries.time_use.records(store, by="task")}
        assert limits == {"fix-permissions": 600.0, "hello-world": 360.0}


def test_trajectories_stored_before_migration_20_get_their_agent_times_and_terminal_on_the_next_ingest(store):
    assert ingest(store, [MINI_RUN], workers=1).errors == []
    # as a store written before: no agent times, no terminal, steps by reading 2
    store.query(
        "update trajectories set agent_started_at = null, agent_ended_at = null, recording = null, panes = null"
    )
    store.query("update trajectories set reading = 2")
    store.query("delete from schema_migrations where version >= 20")
    assert [version for version, _ in store.migrate()] == [20]
    again = ingest(store, [MINI_RUN], workers=1)
    assert (again.reread, again.inserted) == (2, 0)
    filled = store.query(
        "select count(*) from trajectories where agent_started_at is not null and panes is not null"
    ).rows[0][0]
    assert filled == 2


def test_a_leaderboard_submission_names_its_dataset_version_by_its_folder(store, tmp_path):
    """The leaderboard keeps submissions under `results/<dataset>:<version>/`; runs there carry no
    run_metadata.json, so the folder names the version their tasks must be imported at."""
    import shutil

    submission = tmp_path / "results" / "terminal-bench-core:0.1.1" / "20250825_swe-agent-mini_claude-4-sonnet"
    shutil.copytree(MINI_RUN, submission)
    assert ingest(store, [submission], workers=1).errors == []
    rows = queries.task_metadata_coverage.records(store)
    assert [(r["dataset"], r["without_metadata"]) for r in rows] == [("terminal-bench-core==0.1.1", 2)]
