"""`plan --system "AGENT · MODEL"`: one system's codes and time, the same answer the report gives it;
the plan's kind follows the data (agent episodes get a task plan); old plan ids stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from curriculab.analysis import coding
from curriculab.analysis.ingest import ingest
from curriculab.analysis.report import build_report
from curriculab.analysis.store import Store
from curriculab.cli import cli
from curriculab.planner.plan import ProblemPlan
from tests.conftest import leaderboard_that_mostly_times_out

CURSOR = "cursor-cli · claude-sonnet-4-20250514"


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "tb.duckdb"
    with Store(db) as store:
        ingest(store, [leaderboard_that_mostly_times_out(tmp_path)], workers=1)
        coding.run_verifier_coder(store)
    return db


def _plan(db: Path, *args: str):
    result = CliRunner().invoke(cli, ["--db", str(db), "plan", *args, "--json"])
    return result, (json.loads(result.stdout) if result.exit_code == 0 else None)


def test_a_system_plan_reads_that_systems_time_as_the_report_does_and_is_a_task_plan(tmp_path):
    db = _store(tmp_path)
    result, plan = _plan(db, "--system", CURSOR)
    assert result.exit_code == 0, result.output
    # Terminal-Bench trials are agent episodes: a task plan over terminal tasks, said on stderr
    assert plan["kind"] == "tasks" and plan["problems"] == "tasks:builtin" and plan["target_agent"] == "cursor-cli"
    assert "its attempts are agent episodes, so this is a task plan" in result.stderr
    (decision,) = [c for c in plan["codes"] if c["code"] == "all_tests_fail"]
    assert not decision["used"] and decision["reason"].startswith("not read as difficulty: 3 of its 3 failures")
    with Store(db, read_only=True) as store:
        report = build_report(store)
    (row,) = [r for r in report.system_failure_modes if r["system"] == CURSOR and r["code"] == "all_tests_fail"]
    assert row["for_planning"] == "not used: time (3 of 3 timed out)" and row["timed_out"] == 3


def test_a_problem_plan_for_an_agent_only_when_asked_and_saying_what_it_trains(tmp_path):
    db = _store(tmp_path)
    result, plan = _plan(db, "--system", CURSOR, "--problems", "builtin")
    assert result.exit_code == 0, result.output
    assert plan["kind"] == "problems" and plan["target_agent"] == "cursor-cli"
    assert any(
        r.startswith(f"a problem plan for {CURSOR}, whose attempts are agent episodes, as asked")
        for r in plan["reasons"]
    )


def test_an_unknown_system_or_both_targets_are_refused_with_the_known_systems(tmp_path):
    db = _store(tmp_path)
    result, _ = _plan(db, "--system", "nobody · gpt-5")
    assert result.exit_code != 0 and "no system 'nobody · gpt-5' in the store. Known systems: " in result.output
    assert CURSOR in result.output
    result, _ = _plan(db, "--system", CURSOR, "--model", "gpt-5")
    assert result.exit_code != 0 and "not both" in result.output


def test_a_field_a_plan_does_not_use_stays_out_of_its_id():
    fields = dict(
        target_model="m",
        strategy="tarot",
        codes=[],
        taxonomy_version=None,
        coder="rules",
        problems="builtin",
        task_mix=[],
        excluded={},
        provenance={},
        band="weak",
        schedule="forward",
        start_tier=None,
        capability={},
        weights={},
        alpha_bias={},
        thresholds={},
        dynamic={},
    )
    pooled = ProblemPlan(**fields)
    assert "target_agent" not in pooled._hashed()  # the id of a plan made before --system existed
    one = ProblemPlan(**fields, target_agent="goose")
    assert one.content_id() != pooled.content_id() and one.target == "goose · m"


def test_the_report_gives_the_total_of_failures_that_ran_out_of_time(tmp_path):
    db = _store(tmp_path)
    with Store(db, read_only=True) as store:
        report = build_report(store)
        failures, timed = store.query(
            "select count(*) filter (outcome = 'failed'), "
            "count(*) filter (outcome = 'failed' and harness_error = 'agent_timeout') from trajectories"
        ).rows[0]
    said = next(f for f in report.findings if f.startswith("Time: "))
    assert said.startswith(f"Time: {timed} of the {failures} failures (") and timed > 0
