"""Two kinds of plan in one store (issue #59's joints): a problem plan and task plans, each shown,
compared and diffed in its own terms — `plan diff` over two task plans and over a mixed pair, and the
dashboard's Curriculum page on a task plan (the demo's newest plan is its agentic round's)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curriculab.cli import cli
from curriculab.planner.plan import Plan, diff


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
    problem = json.loads(_cli(demo_store_copy, "plan", "show", "--json"))
    return demo_store_copy, plans, problem


def test_plan_diff_compares_task_plans_and_says_when_kinds_differ(two_kinds, tmp_path):
    db, (first, second), _ = two_kinds
    rows = {r["what"]: r for r in json.loads(_cli(db, "plan", "diff", first, second, "--json"))}
    assert (
        rows["held-out tasks"][first] == "csv-quoted-fields" and rows["held-out tasks"][second] == "count-error-lines"
    )
    assert "task mix" in rows and rows["task mix"][first].endswith("tasks")
    plans = json.loads(_cli(db, "query", "select plan_id, plan from plans", "--json"))
    problem_id = next(p["plan_id"] for p in plans if Plan.model_validate_json(p["plan"]).kind == "problems")
    mixed = {r["what"]: r for r in json.loads(_cli(db, "plan", "diff", first, problem_id, "--json"))}
    assert (mixed["kind"][first], mixed["kind"][problem_id]) == ("tasks", "problems")
    assert mixed["weights.basic"][first] == "-" and "capability" in mixed  # only the problem plan has tiers
    task_plan = Plan.model_validate_json(next(p["plan"] for p in plans if p["plan_id"] == first))
    assert diff(task_plan, task_plan) == []


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
