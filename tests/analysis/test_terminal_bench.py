"""Terminal-Bench 1.x runs as the leaderboard publishes them: tmux keystroke logs, harness lines,
installed agents, runs without run_metadata.json, null models, harness faults with and without a
verdict. The fixtures under tests/fixtures/tb/ follow the real files' shape."""

import json
import shutil
from pathlib import Path

import pytest

from curriculab.analysis import queries
from curriculab.analysis.coding import OPAQUE_REASON, run_rule_coders, run_verifier_coder
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.tb import typed_commands
from curriculab.analysis.report import build_report, to_html, to_markdown
from curriculab.trajectory.vocabulary import AGENT_FAULTS


def _typed(lines: list) -> list[tuple[str, str]]:
    issues: list = []
    text = "".join(repr(line) + "\n" if not isinstance(line, str) else line + "\n" for line in lines)
    result = typed_commands(text, Path("commands.txt"), "trial", issues)
    assert issues == []
    return result


def test_keystrokes_are_joined_into_what_was_typed():
    assert _typed(
        [
            ["asciinema rec --stdin /logs/agent.cast", "Enter"],
            ["clear", "Enter"],
            ["ls -la", "; tmux wait -S done", "Enter"],  # the harness's wait suffix is not typed by the agent
            ["python3", ' -c "print(1)"', "Enter"],  # several strings, one command
            ["vim notes.txt\n"],  # a newline inside the string ends the command too
            ["C-c"],  # a control key is its own entry
            ["cat > f.txt << 'EOF'\nline one\nline two\nEOF\n"],
            ["C-d"],
            ["asciinema rec --stdin /logs/tests.cast", "Enter"],
            ["clear", "Enter"],
            ["bash ", "/tests/run-tests.sh", "Enter"],
            ["C-d"],
            ["C-d"],
        ]
    ) == [
        ("env", "asciinema rec --stdin /logs/agent.cast"),
        ("env", "clear"),
        ("agent", "ls -la"),
        ("agent", 'python3 -c "print(1)"'),
        ("agent", "vim notes.txt"),
        ("agent", "C-c"),
        ("agent", "cat > f.txt << 'EOF'\nline one\nline two\nEOF"),
        ("env", "C-d"),  # ends the agent's recording
        ("env", "asciinema rec --stdin /logs/tests.cast"),
        ("env", "clear"),
        ("env", "bash /tests/run-tests.sh"),
        ("env", "C-d"),
        ("env", "C-d"),
    ]


def test_a_typed_line_without_enter_continues_on_the_next_send():
    assert _typed([["echo hel"], ["lo > out.txt", "Enter"]]) == [("agent", "echo hello > out.txt")]


def test_a_line_that_is_not_a_key_list_is_a_warning_not_a_crash():
    issues: list = []
    got = typed_commands(
        "['ls', 'Enter']\n__import__('os').system('true')\n['pwd', 'Enter']\n", Path("c.txt"), "t", issues
    )
    assert got == [("agent", "ls"), ("agent", "pwd")]
    assert [i.reason for i in issues] == [
        "c.txt: record t: field line 2: line 2 is not a Python list of tmux keys: \"__import__('os').system('true')\". "
        "Skipped; check that the file is a Terminal-Bench commands.txt"
    ]
    assert issues[0].severity == "warning"


@pytest.fixture
def tb(store, fixtures):
    report = ingest(store, [fixtures / "tb"], workers=1)
    assert report.errors == [] and report.warnings == []
    return store


def _rows(store, sql, params=None):
    return store.query(sql, params).rows


def test_no_step_is_a_list_repr_and_harness_lines_are_env(tb):
    assert _rows(tb, "select count(*) from steps where command like '[%' or command like '%'', ''Enter''%'") == [(0,)]
    assert _rows(
        tb,
        """select source, action, path, command from steps
                        where trajectory_id like '%hello-world.1-of-2.2025-08-20%' and source <> 'user' order by step_idx""",
    ) == [
        ("env", "run", None, "asciinema rec --stdin /logs/agent.cast"),
        ("env", "run", None, "clear"),
        ("agent", "run", None, "ls -la"),
        ("agent", "edit", "hello.txt", "echo 'Hello, world!' > hello.txt"),
        ("agent", "read", "hello.txt", "cat hello.txt"),
        ("env", "run", None, "C-d"),
        ("env", "run", None, "asciinema rec --stdin /logs/tests.cast"),
        ("env", "run", None, "clear"),
        ("env", "run", None, "bash /tests/run-tests.sh"),
        ("env", "run", None, "C-d"),
    ]


def test_an_installed_agent_is_one_opaque_run_step(tb):
    steps = _rows(
        tb,
        """select source, action, path, tool_name, left(command, 21) from steps
                         where trajectory_id like '%create-web-page.1-of-2%' and source = 'agent'""",
    )
    assert steps == [("agent", "run", None, "installed-agent", "openhands --task 'Cre")]
    # the task text's `echo "hello world" > hello.html` is not an edit of anything
    assert _rows(
        tb,
        "select count(*) from steps s join trajectories t using (trajectory_id) "
        "where not t.actions_logged and s.action = 'edit'",
    ) == [(0,)]
    assert _rows(
        tb,
        "select count(*), count(*) filter (not actions_logged) from trajectories "
        "where run_id in ('2025-08-07__20-46-16', '2025-09-01__10-00-00')",
    ) == [(6, 6)]


def test_every_behavioural_code_abstains_on_installed_agents(tb):
    run_rule_coders(tb)
    statuses = _rows(
        tb,
        """select code, status, reason, count(*) from coding_status c join trajectories t using (trajectory_id)
                            where not t.actions_logged group by all order by all""",
    )
    behavioural = [s for s in statuses if s[0] != "harness_failure"]
    assert {s[1:3] for s in behavioural} == {("not_applicable", OPAQUE_REASON)}
    assert {s[0] for s in behavioural} == {
        "skipped_verification",
        "no_plan_revision",
        "redundant_rework",
        "tool_misuse",
        "reward_hacking",
        "premature_stop",
    }
    assert _rows(
        tb,
        "select count(*) from failure_codes f join trajectories t using (trajectory_id) "
        "where not t.actions_logged and f.code <> 'harness_failure'",
    ) == [(0,)]
    # infrastructure faults are still coded from the trial's own record: of four harness errors, the
    # two without a verdict (the install that failed before the agent typed anything logged no
    # action either); an agent timeout is the agent's failure (v4), and one trial passed anyway
    assert ("harness_failure", "present", None, 2) in statuses
    assert _rows(tb, "select count(*) from trajectories where not actions_logged and harness_error is not null") == [
        (4,)
    ]
    assert _rows(tb, "select count(*) from trajectories where not actions_logged and outcome = 'error'") == [(2,)]
    # v3's published meaning stays on request: a harness-named fault on an attempt that did not pass
    run_rule_coders(tb, taxonomy_version="v3")
    assert _rows(
        tb,
        """select count(*) from failure_codes f join trajectories t using (trajectory_id)
                        where f.taxonomy_version = 'v3' and f.code = 'harness_failure' and not t.actions_logged""",
    ) == [(3,)]
    tb.replace_codes("rules", "v3", list(queries.trajectory_ids(tb)), [], [])  # the others read v4 alone


def test_a_run_without_run_metadata_is_read_with_agent_and_model_from_the_invocation(tb):
    assert _rows(tb, "select agent, model from runs where run_id = '2025-08-07__20-46-16'") == [
        ("mini-swe-agent", "anthropic/claude-sonnet-4-20250514")
    ]
    assert _rows(
        tb, "select count(*), min(model), min(model_raw) from trajectories where run_id = '2025-08-07__20-46-16'"
    ) == [(4, "claude-sonnet-4-20250514", "anthropic/claude-sonnet-4-20250514")]


def test_a_null_model_is_attributed_to_the_agent_and_no_verdict_is_left_out_of_difficulty(tb):
    assert _rows(
        tb, "select model, model_raw, count(*) from trajectories where run_id = '2025-09-01__10-00-00' group by all"
    ) == [("openhands (model unknown)", None, 2)]
    fit_store(tb)
    with_verdict = _rows(tb, "select count(*) from trajectories where outcome in ('passed', 'failed')")[0][0]
    assert _rows(tb, "select sum(n_attempts) from irt_tasks") == [(with_verdict,)]
    assert "openhands (model unknown)" in {m for (m,) in _rows(tb, "select model from irt_models")}


def test_a_verdict_despite_a_harness_fault_stands_and_is_flagged(tb):
    # mini run: fix-permissions twice after agent timeouts (one passed, one failed); fibonacci has no verdict
    assert _rows(
        tb,
        """select attempts, passes, harness_errors, flagged from v_pass_rates
                        where dimension = 'overall' and model = 'claude-sonnet-4-20250514'""",
    ) == [(3, 2, 1, 2)]


def test_an_identical_nested_copy_is_unchanged_never_a_clash(store, fixtures, tmp_path):
    shutil.copytree(fixtures / "tb", tmp_path / "runs")
    shutil.copytree(fixtures / "tb", tmp_path / "runs" / "mirror" / "tb")
    report = ingest(store, [tmp_path / "runs"], workers=1)
    assert report.errors == [] and (report.inserted, report.unchanged) == (10, 10)
    again = ingest(store, [tmp_path / "runs" / "mirror"], workers=1)
    assert again.errors == [] and (again.inserted, again.unchanged) == (0, 10)


def test_a_trial_read_from_its_own_file_or_the_run_file_hashes_the_same(store, fixtures, tmp_path):
    run = fixtures / "tb" / "openhands-run" / "2025-09-01__10-00-00"
    shutil.copytree(run, tmp_path / "a" / run.name)
    only_run_file = tmp_path / "b" / run.name
    shutil.copytree(run, only_run_file)
    for trial in only_run_file.glob("*/*/results.json"):
        trial.unlink()
    first = ingest(store, [tmp_path / "a"], workers=1)
    second = ingest(store, [tmp_path / "b"], workers=1)
    assert (first.inserted, second.unchanged, second.errors) == (2, 2, [])


def _with_all_error_model(store):
    """Add a model whose every attempt ended in a harness error."""
    from curriculab.analysis.ingest.common import add_trajectory
    from curriculab.analysis.store import RowBatch
    from curriculab.trajectory.model import Trajectory

    batch = RowBatch()
    for k in range(2):
        add_trajectory(
            batch,
            Trajectory(
                trajectory_id=f"broken-{k}",
                run_id="broken",
                task_id="hello-world",
                model="broken-model",
                outcome="error",
                harness_error="environment_error",
            ),
            f"h{k}",
            "jsonl",
            "x",
        )
    store.write_batch(batch)


@pytest.mark.parametrize("coded", [False, True])
def test_report_in_every_format_with_null_models_all_error_models_and_no_codes(tb, tmp_path, coded):
    _with_all_error_model(tb)
    if coded:
        run_rule_coders(tb)
    report = build_report(tb)
    json.dumps(report, default=str)
    page = to_html(report)
    markdown = to_markdown(report)
    assert "broken-model: every attempt (2) ended in a harness error; it has no pass rate." in report["findings"]
    assert any("name no model; they are reported as 'openhands (model unknown)'" in f for f in report["findings"])
    assert "openhands (model unknown)" in markdown and "id='report-data'" in page
    if not coded:
        assert "_none: no failure codes from `rules` (run `curriculab code`)_" in markdown
    else:
        assert (
            f"claude-sonnet-4-20250514: none of its 1 failed attempts could be coded by `rules` ({OPAQUE_REASON})."
        ) in report["findings"]


def test_a_pass_after_a_recorded_agent_fault_is_never_called_a_failure(tmp_path, store):
    from curriculab.analysis import queries
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_with_a_pass_after_timeout

    ingest(store, [leaderboard_with_a_pass_after_timeout(tmp_path)], workers=1)
    verdicts = {
        (r["harness_error"], r["verdict"]): r["attempts"] for r in queries.records(queries.harness_errors(store))
    }
    assert verdicts[("agent_timeout", "passed despite a recorded agent fault (counted)")] == 1
    assert verdicts[("agent_timeout", "failed with an agent fault (counted)")] == 1
    assert verdicts[("unknown_agent_error", "failed with an agent fault (counted)")] == 1
    findings = build_report(store)["findings"]
    assert (
        "2 attempts failed with the agent's own fault recorded (a timeout, a crash): the agent's failures, counted "
        "in pass rates, not harness faults." in findings
    )
    assert (
        "1 attempts passed although the harness recorded an agent fault (the tests passed after a timeout or a "
        "crash): passes, counted as passes." in findings
    )
    assert not any("failure" in f and "passed" in f.split(":")[0] for f in findings if "agent fault" in f)


def test_report_sentences_and_tables_follow_one_harness_error_policy(tb):
    report = build_report(tb)
    no_verdict = _rows(tb, "select count(*) from trajectories where outcome = 'error'")[0][0]
    flagged = _rows(tb, "select count(*) from trajectories where outcome <> 'error' and harness_error is not null")[0][
        0
    ]
    assert (no_verdict, flagged) == (2, 3)
    agents = _rows(
        tb, f"select count(*) from trajectories where outcome <> 'error' and harness_error in {tuple(AGENT_FAULTS)}"
    )[0][0]
    assert 0 < agents < flagged
    passed_anyway = _rows(
        tb, f"select count(*) from trajectories where outcome = 'passed' and harness_error in {tuple(AGENT_FAULTS)}"
    )[0][0]
    assert (
        f"{no_verdict} attempts hit an infrastructure fault (harness_failure) and have no verdict; they are left out "
        "of pass rates and failures." in report["findings"]
    )
    assert any(
        f.startswith(f"{agents - passed_anyway} attempts failed with the agent's own fault recorded")
        for f in report["findings"]
    )
    assert passed_anyway == 0 or any(
        f.startswith(f"{passed_anyway} attempts passed although the harness recorded an agent fault")
        for f in report["findings"]
    )
    assert any(
        f.startswith(f"{flagged - agents} attempts hit an infrastructure fault but the tests still gave a verdict")
        for f in report["findings"]
    )
    overview = {o["model"]: o for o in report["overview"]}
    assert (
        sum(o["attempts"] for o in overview.values())
        == _rows(tb, "select count(*) from trajectories where outcome <> 'error'")[0][0]
    )
    assert sum(o["flagged"] for o in overview.values()) == flagged


def test_the_report_does_not_lean_on_irt_tiers_when_irt_predicts_worse_held_out(tb):
    report = build_report(tb)
    held = report["difficulty"]["held_out"]
    assert held["irt_log_loss"] > held["baseline_log_loss"]  # a handful of attempts: IRT overfits here
    assert any(
        f.startswith("IRT predicts held-out attempts worse (log-loss) than the per-task pass rate")
        for f in report["findings"]
    )
    assert not any(f.startswith("Authored tiers match measured difficulty") for f in report["findings"])
    assert "not relied on: IRT is worse than the per-task pass rate held out" in to_markdown(report)


def test_the_harness_closing_key_after_the_tests_is_an_env_step():
    # the orchestrator's logs end: the harness runs the tests, then closes the pane with C-d
    typed = _typed([["droid exec 'Fix the server'", "Enter"], ["bash /tests/run-tests.sh", "Enter"], ["C-d"]])
    assert typed == [("agent", "droid exec 'Fix the server'"), ("env", "bash /tests/run-tests.sh"), ("env", "C-d")]


def test_an_installed_agent_set_up_by_the_harness_is_not_logged_even_without_a_known_invocation(
    store, tmp_path, fixtures
):
    run = tmp_path / "run"
    shutil.copytree(fixtures / "tb" / "openhands-run" / "2025-09-01__10-00-00", run)
    for commands in run.glob("*/*/commands.txt"):
        commands.write_text(
            "['source /installed-agent/setup-env.sh', 'Enter']\n"
            "['lead-architect --task-file /tmp/task.md', 'Enter']\n"
            "['bash /tests/run-tests.sh', 'Enter']\n['C-d']\n"
        )
    ingest(store, [run])
    assert store.query("select distinct actions_logged from trajectories").rows == [(False,)]
    run_rule_coders(store)
    statuses = store.query("select distinct status, reason from coding_status where code <> 'harness_failure'").rows
    assert statuses == [("not_applicable", OPAQUE_REASON)]


def test_no_outcome_code_sits_on_a_passed_trial(tb):
    # the mini run's fix-permissions passed once after an agent timeout (is_resolved true): an
    # attempt that passed did not fail for any reason, the harness's included
    run_rule_coders(tb)
    passed_with_fault = _rows(
        tb, "select count(*) from trajectories where outcome = 'passed' and harness_error is not null"
    )
    assert passed_with_fault[0][0] >= 1
    assert _rows(
        tb,
        """select count(*) from failure_codes f join trajectories t using (trajectory_id)
                        where f.code = 'harness_failure' and t.outcome = 'passed'""",
    ) == [(0,)]
    assert (
        _rows(
            tb,
            """select count(*) from failure_codes f join trajectories t using (trajectory_id)
                        where f.code = 'harness_failure' and t.outcome <> 'passed'""",
        )[0][0]
        >= 1
    )


def test_a_store_coded_before_loses_its_outcome_codes_on_passes_by_migration(tb):
    run_rule_coders(tb)
    (passed,) = _rows(
        tb, "select trajectory_id from trajectories where outcome = 'passed' and harness_error is not null limit 1"
    )
    # as an older curriculab coded it
    tb.query(
        "update coding_status set status = 'present' where code = 'harness_failure' and trajectory_id = ?", [passed[0]]
    )
    tb.query(
        "insert into failure_codes (trajectory_id, code, coder, taxonomy_version, confidence, evidence_steps, rationale) "
        "values (?, 'harness_failure', 'rules', 'v1', 1.0, [], 'harness_error = agent_timeout')",
        [passed[0]],
    )
    tb.query("delete from schema_migrations where version >= 12")
    assert [version for version, _ in tb.migrate()][0] == 12
    assert _rows(
        tb, "select count(*) from failure_codes where code = 'harness_failure' and trajectory_id = ?", [passed[0]]
    ) == [(0,)]
    assert _rows(
        tb, "select status from coding_status where code = 'harness_failure' and trajectory_id = ?", [passed[0]]
    ) == [("absent",)]


def test_systems_come_in_the_leaderboards_order(store, fixtures):
    # openhands (1 of 2, no errors: 0.5) is above cursor-cli (3 of 5 judged but two errors: 0.42 on
    # the leaderboard), though cursor-cli's pass rate over judged attempts is higher
    ingest(store, [fixtures / "tb", fixtures / "tb-leaderboard"], workers=1)
    rows = queries.systems(store)
    figures = list(rows["leaderboard_accuracy"])
    assert figures == sorted(figures, reverse=True)
    agents = list(rows["agent"])
    assert agents.index("openhands") < agents.index("cursor-cli")
    assert (
        rows.set_index("agent").loc["cursor-cli", "pass_rate"] > rows.set_index("agent").loc["openhands", "pass_rate"]
    )


def test_the_drill_down_counts_every_attempt_not_its_limit(tb):
    run_rule_coders(tb)
    everything = queries.trajectories_with_code(tb, "harness_failure")
    first = queries.trajectories_with_code(tb, "harness_failure", limit=1)
    assert len(everything) >= 2 and len(first) == 1
    assert set(first["total"]) == set(everything["total"]) == {len(everything)}


def test_the_default_report_shows_the_verifiers_codes_beside_the_rules(tb):
    # these trials log no agent actions the rules could read, but their tests say how each failed
    run_rule_coders(tb)
    run_verifier_coder(tb)
    report = build_report(tb)
    assert report["coder"] == "rules" and [v["coder"] for v in report["beside"]] == ["verifier"]
    verifier = report["beside"][0]

    def judged(view):
        return sum(c["coded_failures"] for c in view["coverage"])

    assert judged(verifier) > judged(report.as_dict())
    text = to_markdown(report)
    assert "failure codes from `rules` (v6), and beside it `verifier` (v6) (side by side, not merged)" in text
    # per model tables say they pool the model's systems (systems are the unit by default)
    assert "## Pooled by model — coder coverage — `verifier`" in text
    assert "## Pooled by model — top failure modes — `verifier` — " in text
    assert any(f.startswith("`verifier` (per model, pooled, side by side): ") for f in report["findings"])
    alone = build_report(tb, coder="rules")
    assert alone["beside"] == [] and "## Pooled by model — coder coverage: failed" in to_markdown(alone)


def test_a_report_over_codes_of_an_older_taxonomy_says_so_and_how_to_recode(tb):
    run_rule_coders(tb, taxonomy_version="v3")
    stale = (
        "`rules` coded this store under taxonomy v3, not the newest (v6); its codes are shown as coded. "
        "`curriculab code --coder rules` recodes under v6."
    )
    assert stale in build_report(tb)["findings"]
    run_rule_coders(tb)
    assert stale not in build_report(tb)["findings"]


def test_a_trial_whose_agent_typed_nothing_is_not_said_to_have_logged_actions(store, fixtures):
    # cursor-cli's and goose's leaderboard submissions keep their results without a keystroke log:
    # no behavioural code may say "absent" on them, premature_stop (taxonomy v2) included
    ingest(store, [fixtures / "tb-leaderboard"], workers=1)
    assert _rows(store, "select count(*), count(*) filter (actions_logged) from trajectories")[0][1] == 0
    run_rule_coders(store, taxonomy_version="v2")
    assert _rows(store, "select count(*) from coding_status where code <> 'harness_failure' and status = 'absent'") == [
        (0,)
    ]
    assert _rows(store, "select count(*) from coding_status where code = 'premature_stop'")[0][0] > 0


def test_a_store_written_before_is_corrected_by_migration(store, fixtures):
    ingest(store, [fixtures / "tb-leaderboard"], workers=1)
    run_rule_coders(store, taxonomy_version="v2")
    # as an older curriculab stored and coded them
    store.query("update trajectories set actions_logged = true")
    store.query("update coding_status set status = 'absent', reason = null where code <> 'harness_failure'")
    store.query("delete from schema_migrations where version >= 13")
    assert [version for version, _ in store.migrate()][0] == 13
    assert _rows(store, "select count(*) filter (actions_logged) from trajectories") == [(0,)]
    assert _rows(store, "select count(*) from coding_status where code <> 'harness_failure' and status = 'absent'") == [
        (0,)
    ]


def test_a_held_out_check_says_it_was_computed_when_no_fit_is_stored(tb):
    report = build_report(tb)
    assert report["difficulty"]["fit"]["current_fit"] is False  # nothing fitted: the report says so first
    assert report["difficulty"]["held_out"]["computed"] == "now, for this report: no current fit is stored"
    held_out = [f for f in report["findings"] if f.startswith("Held out")]
    assert held_out and held_out[0].startswith("Held out (computed now, for this report: no current fit is stored): ")
    assert "## Held-out check (computed now, for this report: no current fit is stored)" in to_markdown(report)


CLOSED_AT_ONCE = "['asciinema rec --stdin /logs/agent.cast', 'Enter']\n['clear', 'Enter']\n['C-d']\n"
"""A real commands.txt (orchestrator · claude-sonnet-4, qemu-alpine-ssh.5-of-5 on the leaderboard, and
two more like it): the harness opened the recording and closed it, the agent typed nothing."""


def test_a_recording_closed_before_the_agent_typed_anything_logs_no_action(store, fixtures, tmp_path):
    run = Path(shutil.copytree(fixtures / "tb" / "2025-08-20__12-00-00", tmp_path / "2025-08-20__12-00-00"))
    trial = run / "hello-world" / "hello-world.2-of-2.2025-08-20__12-00-00"
    (trial / "commands.txt").write_text(CLOSED_AT_ONCE)
    assert typed_commands(CLOSED_AT_ONCE, Path("commands.txt"), "t", []) == [
        ("env", "asciinema rec --stdin /logs/agent.cast"),
        ("env", "clear"),
        ("env", "C-d"),  # the key that ended a recording no tests followed
    ]
    ingest(store, [run], workers=1)
    run_rule_coders(store)
    tid = _rows(store, "select trajectory_id from trajectories where trajectory_id like '%hello-world.2-of-2%'")[0][0]
    assert _rows(store, "select actions_logged from trajectories where trajectory_id = ?", [tid]) == [(False,)]
    judged = _rows(
        store,
        "select distinct status from coding_status where trajectory_id = ? and coder = 'rules' and code <> 'harness_failure'",
        [tid],
    )
    assert judged == [("not_applicable",)]  # no reward_hacking 'absent' from a keystroke the agent never typed
    fresh = _rows(
        store, "select step_idx, source, action, command from steps where trajectory_id = ? order by 1", [tid]
    )
    # a store that attributed the C-d to the agent and coded it is corrected by migration 15
    last = max(i for i, *_ in fresh)
    store.query("update steps set source = 'agent' where trajectory_id = ? and step_idx = ?", [tid, last])
    store.query("update trajectories set actions_logged = true where trajectory_id = ?", [tid])
    store.query(
        "update coding_status set status = 'absent', reason = null where trajectory_id = ? and code <> 'harness_failure'",
        [tid],
    )
    store.query("delete from schema_migrations where version >= 15")
    assert [version for version, _ in store.migrate()][:1] == [15]
    assert (
        _rows(store, "select step_idx, source, action, command from steps where trajectory_id = ? order by 1", [tid])
        == fresh
    )
    assert _rows(store, "select actions_logged from trajectories where trajectory_id = ?", [tid]) == [(False,)]
    assert _rows(
        store,
        "select distinct status from coding_status where trajectory_id = ? and coder = 'rules' and code <> 'harness_failure'",
        [tid],
    ) == [("not_applicable",)]
