"""Harbor task directories in the shapes of public suites (tests/fixtures/harbor-tasks): read
into the `tasks` table, checked for where they run, malformed ones refused with file, field and fix."""

from __future__ import annotations

import json
import shutil

import pytest

from curriculab.training.terminal import load_task
from curriculab.training.terminal.task import read_dockerfile
from tests.conftest import FIXTURES

SHAPES = FIXTURES / "harbor-tasks"


def test_tasks_import_stores_every_shape_and_refuses_the_malformed_one_by_file_field_and_fix(cli_run):
    done = cli_run("tasks", "import", str(SHAPES), "--json")
    assert done.exit_code == 1, done.output
    summary = json.loads(done.stdout)
    assert summary["tasks"] == 4 and summary["refused"] == 1
    assert summary["errors"] == [
        f"{SHAPES / 'broken-difficulty' / 'task.toml'}: field metadata.difficulty: is 'extreme'. "
        "Use one of easy, medium, hard (Harbor's scale)"
    ]
    rows = cli_run("query", "SELECT task_id, tier_authored, n_milestones, metadata FROM tasks ORDER BY 1", "--json")
    stored = {row["task_id"]: row for row in json.loads(rows.stdout)}
    assert sorted(stored) == [
        "log_level_summary_medium",
        "release-notes-steps",
        "sum-column-prebuilt",
        "word-count-init",
    ]
    steps = stored["release-notes-steps"]
    assert steps["tier_authored"] == "intermediate" and steps["n_milestones"] == 2
    meta = json.loads(steps["metadata"]) if isinstance(steps["metadata"], str) else steps["metadata"]
    assert meta["steps"] == ["draft", "publish"] and meta["multi_step_reward_strategy"] == "mean"
    assert meta["environment"]["workdir"] == "/app" and meta["schema_version"] == "1.4"
    prebuilt = stored["sum-column-prebuilt"]
    meta = json.loads(prebuilt["metadata"]) if isinstance(prebuilt["metadata"], str) else prebuilt["metadata"]
    assert meta["package"] == "terminal-bench/sum-column-prebuilt" and meta["environment"]["allow_internet"] is True
    assert stored["log_level_summary_medium"]["tier_authored"] == "intermediate"
    again = json.loads(cli_run("tasks", "import", str(SHAPES / "word-count-init"), "--json").stdout)
    assert again["refused"] == 0


def test_tasks_check_says_where_each_shape_runs_and_why_not(cli_run):
    done = cli_run("tasks", "check", str(SHAPES), "--json")
    assert done.exit_code == 1  # the malformed task
    report = {r["task_id"]: r for r in json.loads(done.stdout)}
    assert report["broken-difficulty"]["unreadable"].endswith("Use one of easy, medium, hard (Harbor's scale)")
    for runs in ("release-notes-steps", "word-count-init"):
        assert report[runs]["ok"] and report[runs]["backend"] == "bwrap"
        assert set(report[runs]["oracle"]["milestones"].values()) == {1.0}
        assert set(report[runs]["nop"]["milestones"].values()) == {0.0}
    assert report["release-notes-steps"]["oracle"]["milestones"] == {"draft": 1.0, "publish": 1.0}
    heavy = report["log_level_summary_medium"]
    assert heavy["backend"] is None and heavy["oracle"] is None
    assert any(r.startswith("needs its image: python3 packages missing here: pytest==8.4.1") for r in heavy["reasons"])
    fetching = report["sum-column-prebuilt"]["reasons"]
    assert any(
        r.startswith("verifier needs the network: test.sh:5 `apt-get") and "test.sh:8 `curl -LsSf" in r
        for r in fetching
    )
    table = cli_run("tasks", "check", str(SHAPES / "word-count-init"))
    assert table.exit_code == 0 and "1 of 1 run here; 0 flagged; 0 unreadable; 0 need their image." in table.output


def test_a_dockerfile_is_read_for_placements_packages_and_the_commands_to_replay():
    plan = read_dockerfile(SHAPES / "log_level_summary_medium" / "environment" / "Dockerfile")
    assert plan.base == "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"
    assert plan.workdir == "/workspace" and plan.env == {"DEBIAN_FRONTEND": "noninteractive", "TEST_DIR": "/tests"}
    assert [p.target for p in plan.placements] == ["/workspace/logs/app-1.log", "/workspace/logs/app-2.log"]
    assert plan.apt_packages == ["python3-pip"] and plan.pip_packages == ["pytest==8.4.1", "pandas==2.3.2"]
    assert plan.commands == ["ln -s /usr/bin/python3 /usr/bin/python", "mkdir -p /workspace/logs"]


def test_a_task_missing_a_step_instruction_is_refused_naming_the_step(tmp_path):
    task = tmp_path / "release-notes-steps"
    shutil.copytree(SHAPES / "release-notes-steps", task)
    (task / "steps" / "publish" / "instruction.md").unlink()
    with pytest.raises(ValueError) as caught:
        load_task(task)
    assert str(caught.value) == (
        f"{task / 'task.toml'}: field steps[1].name: step 'publish' has no instruction "
        f"({task / 'steps' / 'publish' / 'instruction.md'} is missing). Write steps/publish/instruction.md or remove the step"
    )


def test_bad_arguments_to_the_tasks_commands_say_what_to_give(cli_run, tmp_path):
    missing = cli_run("tasks", "check", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2
    assert f"{tmp_path / 'nowhere'}: no such file or directory. Give task directories, or `builtin`" in missing.output
    zero = cli_run("tasks", "check", str(SHAPES / "word-count-init"), "--command-timeout", "0")
    assert zero.exit_code == 2 and "EpisodeLimits.command_timeout_s is 0.0; it must be positive" in zero.output
    from curriculab.training.terminal.environment import TerminalEnvironment

    with pytest.raises(KeyError, match="task 'no-such-task' is not in this environment's tasks"):
        TerminalEnvironment(SHAPES).reset(task_id="no-such-task")


def test_milestone_names_that_are_not_a_list_of_names_are_refused_by_field_and_fix(tmp_path):
    from curriculab.training.terminal.task import TaskError
    from tests.training.terminal_tasks import write_task

    single = 'version = "1.0"\n[metadata]\ndifficulty = "easy"\nmilestones = "greeting"\n'
    with pytest.raises(TaskError) as refused:
        load_task(write_task(tmp_path, "single", toml=single))
    assert str(refused.value).endswith(
        'field metadata.milestones: is \'greeting\', not a list of strings. Write milestones = ["a", "b"]'
    )
    steps = 'version = "1.0"\n[metadata]\ndifficulty = "easy"\n\n[[steps]]\nname = "write"\nmilestones = []\n'
    with pytest.raises(TaskError) as refused:
        load_task(write_task(tmp_path, "steps", toml=steps))
    assert str(refused.value).endswith(
        'field steps[0].milestones: is [], not a list of names. Write milestones = ["a", "b"]'
    )


def test_tasks_check_refuses_a_jobs_count_below_one(cli_run):
    done = cli_run("tasks", "check", "builtin", "--jobs", "0", db=False)
    assert done.exit_code == 2 and "Invalid value for '--jobs': 0 is not in the range x>=1." in done.output
