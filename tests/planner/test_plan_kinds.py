"""Two kinds of plan in one store (issue #59's joints): a problem plan and task plans, each shown,
compared and diffed in its own terms — `plan show` and `plan diff` over two task plans and over a
mixed pair, the dashboard's Curriculum page on a task plan (the demo's newest plan is its agentic
round's) — and plans stored before plans had kinds, read in the new shape with their ids."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from curriculab.analysis.store import Store
from curriculab.cli import cli
from curriculab.planner.plan import ProblemPlan, TaskPlan, diff, load, parse, render_config
from curriculab.training.grpo import run_id_for

STORED_BEFORE_KINDS = Path(__file__).parents[1] / "fixtures" / "stored-plans" / "schema16-plans.json"


def _cli(db, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def two_kinds(demo_store_copy):
    """The demo store with two task plans of the built-in suite beside its problem plans."""
    model = "atlas-7b-coder"
    plans = []
    for held_out in ("csv-quoted-fields", "count-error-lines"):
        made = json.loads(
            _cli(demo_store_copy, "plan", "--model", model, "--tasks", "builtin", "--held-out", held_out, "--json")
        )
        plans.append(made["plan_id"])
    kinds = json.loads(_cli(demo_store_copy, "query", "select plan_id, kind from plans", "--json"))
    problem = next(p["plan_id"] for p in kinds if p["kind"] == "problems")
    return demo_store_copy, plans, problem


def test_plan_diff_compares_task_plans_and_says_when_kinds_differ(two_kinds):
    db, (first, second), problem_id = two_kinds
    rows = {r["what"]: r for r in json.loads(_cli(db, "plan", "diff", first, second, "--json"))}
    assert (
        rows["held-out tasks"][first] == "csv-quoted-fields" and rows["held-out tasks"][second] == "count-error-lines"
    )
    assert "task mix" in rows and rows["task mix"][first].endswith("tasks")
    plans = json.loads(_cli(db, "query", "select plan_id, plan from plans", "--json"))
    mixed = {r["what"]: r for r in json.loads(_cli(db, "plan", "diff", first, problem_id, "--json"))}
    assert (mixed["kind"][first], mixed["kind"][problem_id]) == ("tasks", "problems")
    assert mixed["problems"][first] == "tasks:builtin" and mixed["strategy"][first] == "milestones"
    # a mixed pair compares what both kinds hold; tier choices exist on one side only
    assert not any(what.startswith(("weights", "alpha_bias", "capability", "band", "held-out")) for what in mixed)
    task_plan = parse(next(p["plan"] for p in plans if p["plan_id"] == first))
    assert isinstance(task_plan, TaskPlan) and diff(task_plan, task_plan) == []


def test_plan_show_explains_each_kind_in_its_own_terms(two_kinds):
    db, (first, _), problem = two_kinds
    task_text = _cli(db, "plan", "show", first)
    assert task_text.startswith(f"task plan {first} for atlas-7b-coder: suite builtin, rewards milestone_reward")
    assert "1 held out" in task_text.splitlines()[0] and " w basic" not in task_text
    shown = json.loads(_cli(db, "plan", "show", first, "--json"))
    assert shown["kind"] == "tasks" and shown["group_size"] == 4
    assert not {"weights", "capability", "band", "schedule", "thresholds"} & set(shown)  # only its own fields
    problem_text = _cli(db, "plan", "show", problem)
    assert problem_text.startswith(f"plan {problem} for ") and " w basic " in problem_text
    assert "group_size" not in json.loads(_cli(db, "plan", "show", problem, "--json"))


def test_plans_stored_before_kinds_read_in_the_new_shape_with_their_ids(tmp_path):
    """Rows `plans` held at schema 16 (written by curriculab 17395d2: two problem plans, two task plans,
    one with held-out tasks) are rewritten by migration 17; each keeps its id, which is still the hash
    of its content, so the runs named after it (and their checkpoints, found by run id) carry on."""
    legacy = json.loads(STORED_BEFORE_KINDS.read_text())
    db = tmp_path / "old.duckdb"
    with Store(db):
        pass
    connection = duckdb.connect(str(db))
    connection.execute("delete from schema_migrations where version >= 17")
    connection.execute("alter table plans drop column kind")
    for row in legacy:
        columns = ", ".join(row)
        connection.execute(f"insert into plans ({columns}) values ({', '.join('?' * len(row))})", list(row.values()))
    connection.close()
    with Store(db) as store:  # opening for writing migrates
        kinds = dict(store.query("select plan_id, kind from plans").rows)
        read = {row["plan_id"]: load(store, row["plan_id"]) for row in legacy}
    assert sorted(kinds.values()) == ["problems", "problems", "tasks", "tasks"]
    for row in legacy:
        plan, old = read[row["plan_id"]], json.loads(row["plan"])
        assert plan.plan_id == row["plan_id"] == plan.content_id()
        assert plan.kind == kinds[plan.plan_id] == ("tasks" if old["problems"].startswith("tasks:") else "problems")
        assert isinstance(plan, TaskPlan if plan.kind == "tasks" else ProblemPlan)
        if isinstance(plan, TaskPlan):
            assert plan.group_size == old["thresholds"]["group_size"]
            assert plan.held_out == old["provenance"]["inputs"]["held_out"]
        else:
            assert (plan.weights, plan.schedule, plan.capability) == (
                old["weights"],
                old["schedule"],
                old["capability"],
            )
        # the plan.yaml it renders now is the one stored then, so `train` derives the same run id from it
        assert render_config(plan) == row["config_yaml"]
        output = tmp_path / "runs"
        assert run_id_for(yaml.safe_load(row["config_yaml"])["plan"]["plan_id"], 0, output) == run_id_for(
            plan.plan_id, 0, output
        )
    assert sum(1 for p in read.values() if isinstance(p, TaskPlan) and p.held_out) == 1
    assert _cli(db, "plan", "show", legacy[-1]["plan_id"]).startswith(f"task plan {legacy[-1]['plan_id']}")


def test_the_curriculum_page_shows_a_task_plan_in_its_own_terms(two_kinds, monkeypatch):
    from tests.dashboard.test_app import _fresh, _metric, _page

    db, (first, second), _ = two_kinds
    monkeypatch.setenv("CURRICULAB_DB", str(db))
    at = _page(_fresh(), "curriculum")
    at.selectbox(key="plan_a").select(second).run()
    assert not at.exception, [e.value for e in at.exception]
    assert _metric(at, "Suite") == "builtin" and _metric(at, "Held out") == "1"
    assert int(_metric(at, "Tasks")) >= 20
    # compared with the other task plan, then with a problem plan: no tier of a task plan is looked up
    problem = next(o.split(" · ")[0] for o in at.selectbox(key="plan_b").options if " · tarot · " in o)
    for other in (first, problem):
        at.selectbox(key="plan_b").select(other).run()
        assert not at.exception, [e.value for e in at.exception]
