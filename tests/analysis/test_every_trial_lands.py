"""Every trial of a real run reaches the store, or is refused with a reason: no silent drops.
The shapes (tests/fixtures/tb-leaderboard/README.md) are the leaderboard's: cursor-cli runs with
per-trial results only, goose's results kept at the submission's top, Harbor trials that kept
their verdict and lost their companions."""

import json
import shutil
from pathlib import Path

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.pipeline import discover

LEADERBOARD = Path(__file__).parents[1] / "fixtures" / "tb-leaderboard"
CURSOR = LEADERBOARD / "20250811_cursor-cli_claude-4-sonnet"
GOOSE = LEADERBOARD / "20250818_goose_claude-opus-4-1"


def _trials(store) -> dict[str, tuple]:
    return {
        row[0]: row[1:]
        for row in store.query("select trajectory_id, run_id, task_id, outcome, harness_error from trajectories").rows
    }


def _one(store, sql: str) -> tuple:
    return store.query(sql).rows[0]


def test_the_whole_tree_lands_with_nothing_refused(store):
    report = ingest(store, [LEADERBOARD])
    assert (report.inserted, report.quarantined) == (13, 0), [i.reason for i in report.errors]
    trials = _trials(store)
    runs = {row[0] for row in trials.values()}
    assert runs == {
        "run1_2025-08-10__05-27-18",
        "ddf703bf-dd6c-462f-bacb-f0ce88bd126a",
        "9b6f0a52-goose-run-1",
        "9b6f0a52-goose-run-2",
    }
    # run2's trials come from its run-level file and (for two) their own: each counted once
    assert sum(row[0] == "ddf703bf-dd6c-462f-bacb-f0ce88bd126a" for row in trials.values()) == 4


def test_a_cursor_run_folder_alone_is_a_run(store):
    report = ingest(store, [CURSOR / "run1_2025-08-10__05-27-18"])
    assert (report.inserted, report.quarantined) == (3, 0)
    by_task = {row[1]: row[2] for row in _trials(store).values()}
    assert by_task == {"hello-world": "failed", "fix-permissions": "passed", "create-bucket": "error"}


@pytest.mark.parametrize("fmt", ["auto", "tb"])
def test_goose_results_files_are_runs_with_verdicts_and_no_steps(store, fmt):
    report = ingest(store, sorted(GOOSE.glob("*.json")), fmt)
    assert (report.inserted, report.quarantined) == (6, 0), [i.reason for i in report.errors]
    assert (
        _one(
            store,
            "select count(*) from steps s join trajectories t using (trajectory_id) "
            "where t.run_id like '9b6f0a52%' and s.source = 'agent'",
        )[0]
        == 0
    )
    tests = _one(store, "select count(*) from test_results")[0]
    assert tests == 7  # parser results kept: 2 + 0 + 1 and 2 + 2 + 0 (none where the trial has no parser results)


def test_a_harbor_trial_with_only_its_result_keeps_its_verdict(store, fixtures):
    report = ingest(store, [fixtures / "harbor-result-only"])
    assert (report.inserted, report.quarantined) == (2, 0)
    assert _one(store, "select count(*) filter (where outcome = 'passed'), count(*) from trajectories") == (1, 2)


def test_every_file_that_used_to_be_skipped_is_now_read_or_refused(tmp_path):
    # one planted file of each kind skipped today, plus one no reader can take: nothing is silent
    tree = tmp_path / "submission"
    shutil.copytree(CURSOR / "run1_2025-08-10__05-27-18", tree / "run1_x")
    shutil.copy(next(GOOSE.glob("*_results.json")), tree / "2025-08-17__09-12-00_results.json")
    stray = tree / "notes" / "results.json"
    stray.parent.mkdir(parents=True)
    stray.write_text(json.dumps({"score": 0.5}))
    units, issues = discover([tree])
    assert sorted((u.kind, u.path.name) for u in units) == [
        ("json", "2025-08-17__09-12-00_results.json"),
        ("tb", "run1_x"),
    ]
    assert [(Path(i.path).name, i.reason.split(": ", 1)[1].split(". Point at")[0]) for i in issues] == [
        (
            "notes",
            "holds results.json but no trial could be read from it (not a Harbor trial or job, not a `tb run` "
            "directory)",
        )
    ]


def test_the_summary_counts_trials_found_ingested_unchanged_and_refused(tmp_path):
    from click.testing import CliRunner

    from curriculab.cli import cli

    cli_runner = CliRunner()
    tree = tmp_path / "in"
    shutil.copytree(CURSOR, tree / "cursor")
    broken = (
        tree
        / "cursor"
        / "run1_2025-08-10__05-27-18"
        / "hello-world"
        / "hello-world.1-of-1.2025-08-10__05-27-18"
        / "results.json"
    )
    broken.write_text(broken.read_text().replace('"is_resolved": false', '"is_resolved": "no"'))
    db = tmp_path / "s.duckdb"
    first = cli_runner.invoke(cli, ["--db", str(db), "ingest", str(tree)])
    assert first.exit_code == 1
    assert "7 trials found: 6 ingested, 0 unchanged, 1 refused" in first.output, first.output
    again = cli_runner.invoke(cli, ["--db", str(db), "ingest", "--verify", str(tree)])
    assert "7 trials found: 0 ingested, 6 unchanged, 1 refused" in again.output, again.output
