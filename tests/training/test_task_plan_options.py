"""Every option of `train` and `loop` reaches the trainer of a task plan or is refused saying why
(issue #59's joints): none is dropped on the agentic path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curriculab.cli import cli


def _cli(db: Path, *args: str):
    return CliRunner().invoke(cli, ["--db", str(db), *args])


@pytest.fixture
def task_plan(tmp_path) -> tuple[Path, Path]:
    db, plan = tmp_path / "s.duckdb", tmp_path / "plan.yaml"
    made = _cli(db, "plan", "--model", "tiny-agent", "--tasks", "builtin", "-o", str(plan), "--json")
    assert made.exit_code == 0, made.output
    return db, plan


@pytest.mark.parametrize(
    "option, refusal",
    [
        (["--generation-backend", "static-cache"], "the static-cache backend is for problem plans"),
        (["--use-vllm", "server"], "the vllm-server backend is for problem plans"),
        (["--dynamic"], "--dynamic/--schedule steers a problem plan's tier schedule"),
        (["--static-sampling"], "--live-sampling/--static-sampling steers a problem plan's tier schedule"),
    ],
)
def test_a_problem_plans_option_on_a_task_plan_is_refused_saying_why(task_plan, option, refusal):
    db, plan = task_plan
    result = _cli(db, "train", "--config", str(plan), *option)
    assert result.exit_code != 0 and refusal in result.output, result.output


def test_every_other_option_reaches_the_agentic_trainer(task_plan, monkeypatch, tmp_path):
    from curriculab.training import agentic

    seen = {}

    def trainer(config, model, options):
        seen.update(config=str(config), model=model, options=options)
        raise agentic.TrainError("stopped here: the options arrived")

    monkeypatch.setattr(agentic, "train_agent", trainer)
    db, plan = task_plan
    args = ["--model", "tiny", "--max-steps", "2", "--output-dir", str(tmp_path / "out"), "--save-steps", "1"]
    args += ["--resume", "--allow-unsandboxed", "--generation-backend", "generate"]
    result = _cli(db, "train", "--config", str(plan), *args)
    assert "stopped here: the options arrived" in result.output
    options = seen["options"]
    assert (options.max_steps, options.save_steps, options.resume, options.allow_unsandboxed) == (2, 1, True, True)
    assert (str(options.output_dir), options.generation_backend, options.db_path) == (
        str(tmp_path / "out"),
        "generate",
        str(db),
    )


def test_without_bubblewrap_allow_unsandboxed_puts_the_episodes_on_namespaces(monkeypatch, tmp_path):
    from curriculab.training.agentic import episode_backend
    from curriculab.training.models import TrainError

    bare = tmp_path / "bin"  # a PATH with no bwrap on it
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(TrainError, match="pass --allow-unsandboxed"):
        episode_backend(False)
    assert episode_backend(True) == "namespaces"


def test_loop_over_tasks_starts_from_an_empty_store_and_refuses_problem_options(tmp_path):
    db = tmp_path / "new.duckdb"
    done = _cli(
        db, "loop", "--model", "tiny-agent", "--tasks", "builtin", "--rounds", "0", "--out", str(tmp_path / "o")
    )
    assert done.exit_code == 0, done.output  # the loop imports the suite itself: no "run ingest first"
    tasks = json.loads(_cli(db, "query", "select count(*) as n from tasks", "--json").output)
    assert tasks[0]["n"] >= 20
    for option in (["--problems", "humaneval"], ["--capability", "strong"]):
        refused = _cli(db, "loop", "--model", "tiny-agent", "--tasks", "builtin", "--rounds", "0", *option)
        assert refused.exit_code != 0 and "is for a loop over problems" in refused.output, refused.output


def test_one_rule_finds_a_suites_tasks_for_training_checking_and_the_environment(tmp_path):
    """Tasks nested in folders are found by every command alike (checked is trained); two of one name
    are refused; a task's own folders are not searched."""
    import shutil

    from curriculab.commands.tasks import _task_dirs
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.suite import BUILTIN_SUITE, SuiteError, task_directories

    suite = tmp_path / "suite"
    for group, name in (("text", "count-error-lines"), ("data/csv", "csv-quoted-fields")):
        shutil.copytree(BUILTIN_SUITE / name, suite / group / name)
    trained = task_directories(str(suite))
    assert sorted(trained) == ["count-error-lines", "csv-quoted-fields"]
    assert sorted(p.name for p in _task_dirs((str(suite),))) == sorted(trained)
    with TerminalEnvironment(str(suite)) as environment:  # a nested task resets (it used to be unknown here)
        environment.reset(task_id="csv-quoted-fields")
        assert environment.task is not None and environment.task.task_id == "csv-quoted-fields"
    shutil.copytree(BUILTIN_SUITE / "count-error-lines", suite / "again" / "count-error-lines")
    with pytest.raises(SuiteError, match="two tasks are named 'count-error-lines'"):
        task_directories(str(suite))
