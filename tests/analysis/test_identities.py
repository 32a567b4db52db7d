"""The right identities: one model per model (aliases joined, null names filled from the
submission folder, or set by the user), systems ranked as agent × model, pooling said out loud,
and the leaderboard's own figure beside the pass rate."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from curriculab.analysis.ingest import Identity, ingest, read_identities
from curriculab.analysis.report import build_report, to_markdown
from curriculab.cli import cli

FIXTURES = Path(__file__).parents[1] / "fixtures"
LEADERBOARD = FIXTURES / "tb-leaderboard"


def _rows(store, sql):
    return store.query(sql).rows


def _submission(tmp_path: Path, folder: str, run_id: str) -> Path:
    """The fixture run whose run_metadata.json has `model_name: null` (as Factory Droid's), filed
    under a leaderboard submission folder, with a run id of its own."""
    run = tmp_path / folder / run_id
    shutil.copytree(FIXTURES / "tb" / "openhands-run" / "2025-09-01__10-00-00", run)
    meta = json.loads((run / "run_metadata.json").read_text())
    assert meta["model_name"] is None
    meta["run_id"] = run_id
    (run / "run_metadata.json").write_text(json.dumps(meta))
    doc = json.loads((run / "results.json").read_text())
    doc["id"] = run_id
    (run / "results.json").write_text(json.dumps(doc))
    return run


def test_null_models_are_filled_from_the_submission_folder_not_pooled(store, tmp_path):
    for folder, run_id in (
        ("20250905_droid_claude-opus-4-1", "2025-09-05__01-00-00"),
        ("20250906_droid_claude-sonnet-4-0", "2025-09-06__01-00-00"),
        ("20250907_droid_gpt-5", "2025-09-07__01-00-00"),
    ):
        _submission(tmp_path, folder, run_id)
    report = ingest(store, [tmp_path])
    assert report.quarantined == 0
    assert sorted(_rows(store, "select distinct model from trajectories")) == [
        ("claude-opus-4-1-20250805",),
        ("claude-sonnet-4-20250514",),
        ("gpt-5",),
    ]
    assert _rows(store, "select count(*) from trajectories where model like '%(model unknown)%'") == [(0,)]


def test_a_provider_alias_is_the_dated_model(store, tmp_path):
    jsonl = tmp_path / "three.jsonl"
    base = json.loads((FIXTURES / "jsonl" / "rollouts.jsonl").read_text().splitlines()[0])
    lines = [
        json.dumps({**base, "trajectory_id": f"t{k}", "model": name})
        for k, name in enumerate(["claude-sonnet-4-0", "claude-sonnet-4-20250514", "anthropic/claude-sonnet-4-0"])
    ]
    jsonl.write_text("\n".join(lines) + "\n")
    report = ingest(store, [jsonl])
    assert report.quarantined == 0, [i.reason for i in report.errors]
    assert _rows(store, "select distinct model from trajectories") == [("claude-sonnet-4-20250514",)]
    assert sorted(_rows(store, "select model_raw from trajectories")) == [
        ("anthropic/claude-sonnet-4-0",),
        ("claude-sonnet-4-0",),
        ("claude-sonnet-4-20250514",),
    ]


def test_identity_flags_and_file_name_the_runs_also_when_already_stored(tmp_path):
    db = tmp_path / "s.duckdb"
    runner = CliRunner()
    run = _submission(tmp_path / "in", "unnamed", "2025-09-05__01-00-00")
    assert runner.invoke(cli, ["--db", str(db), "ingest", str(run)]).exit_code == 0
    # the same files again, now with who ran them: the stored runs take the names
    named = runner.invoke(
        cli, ["--db", str(db), "ingest", "--agent", "factory-droid", "--model", "claude-opus-4-1", str(run)]
    )
    assert named.exit_code == 0, named.output
    from curriculab.analysis.store import Store

    with Store(db, read_only=True) as store:
        assert _rows(store, "select distinct model, model_raw from trajectories") == [
            ("claude-opus-4-1-20250805", "claude-opus-4-1")
        ]
        assert _rows(store, "select agent, model from runs") == [("factory-droid", "claude-opus-4-1")]
    mapping = tmp_path / "who.yaml"
    mapping.write_text("- path: '*/unnamed/*'\n  model: gpt-5\n")
    assert read_identities(mapping) == [Identity("*/unnamed/*", None, "gpt-5")]
    again = runner.invoke(cli, ["--db", str(db), "ingest", "--identities", str(mapping), str(run)])
    assert again.exit_code == 0, again.output
    with Store(db, read_only=True) as store:
        assert _rows(store, "select distinct model from trajectories") == [("gpt-5",)]
        # the file sets no agent: the run's own metadata says it again (identities hold per call: keep them in a file)
        assert _rows(store, "select agent from runs") == [("openhands",)]


@pytest.mark.parametrize(
    "content, message",
    [
        ("path: x", "expected a YAML list of {path: <glob>, agent: <name>, model: <name>}. Fix the file"),
        ("- model: gpt-5", "entry 0 must have a `path` glob and only `agent` and `model` besides. Fix entry 0"),
        ("- path: '*'", "entry 0: identity for * sets neither agent nor model. Give one or both"),
    ],
)
def test_a_bad_identity_file_says_what_to_fix(tmp_path, content, message):
    mapping = tmp_path / "who.yaml"
    mapping.write_text(content + "\n")
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "s.duckdb"), "ingest", "--identities", str(mapping), str(LEADERBOARD)]
    )
    assert result.exit_code == 2 and f"{mapping}: {message}" in result.output, result.output


def test_the_report_ranks_systems_and_shows_the_leaderboards_figure(store, tmp_path):
    ingest(store, [LEADERBOARD, FIXTURES / "tb"])
    report = build_report(store)
    systems = {(s["agent"], s["model"]): s for s in report["systems"]}
    cursor = systems[("cursor-cli", "claude-sonnet-4-20250514")]
    # run1: 1 pass of 3 trials; run2: 2 of 4 (an infrastructure error counts as a failure there)
    assert (cursor["runs"], cursor["trials"], cursor["passes"]) == (2, 7, 3)
    assert cursor["leaderboard_accuracy"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    # goose run1: an agent crash without a verdict is a failed attempt, as the leaderboard counts it
    goose = systems[("goose", "claude-opus-4-1-20250805")]
    assert (goose["attempts"], goose["errors"], goose["leaderboard_accuracy"]) == (
        5,
        1,
        pytest.approx((1 / 3 + 2 / 3) / 2),
    )
    figures = [s["leaderboard_accuracy"] for s in report["systems"]]
    assert figures == sorted(figures, reverse=True)  # the leaderboard's order, not the judged pass rate's
    text = to_markdown(report)
    assert "## Systems: agent × model, in the leaderboard's order" in text and "leaderboard_accuracy" in text


def test_a_row_that_pools_agents_is_named_in_the_report_and_plan_warns(demo_store_copy, tmp_path):
    from curriculab.analysis.store import Store
    from curriculab.planner.plan import POOLING_WARNING, build_plan
    from curriculab.training.problems import builtin_problems

    with Store(demo_store_copy) as store:
        model = store.query(
            "select t.model from trajectories t join runs r using (run_id) where r.agent is not null "
            "group by 1 order by count(*) desc limit 1"
        ).scalar()
        # the demo has one run and agent per model: a second harness's run of the same model joins it
        extra = tmp_path / "other.jsonl"
        base = json.loads((FIXTURES / "jsonl" / "rollouts.jsonl").read_text().splitlines()[0])
        extra.write_text(json.dumps({**base, "trajectory_id": "other-0", "run_id": "other-run", "model": model}) + "\n")
        ingest(store, [extra], identities=[Identity(None, "another-harness", None)])
        report = build_report(store, model=model)
        assert any(f.startswith(f"{model} pools 2 agents") for f in report["findings"]), report["findings"]
        plan = build_plan(store, model, builtin_problems(), "builtin")
        assert plan.reasons[0].startswith(f"{POOLING_WARNING}{model} pools 2 agents")


def test_irt_capability_is_the_mean_prediction_over_the_models_own_tasks(store):
    import math

    from curriculab.analysis import queries
    from curriculab.analysis.difficulty import fit_store
    from curriculab.planner.evidence import estimate_capability

    ingest(store, [LEADERBOARD, FIXTURES / "tb"])
    fit_store(store)
    model = "claude-sonnet-4-20250514"
    capability = estimate_capability(store, model)
    assert capability.source == "irt"
    theta = queries.records(queries.model_abilities(store, model=model))[0]["ability"]
    tasks = {
        r[0]
        for r in store.query(
            "select distinct task_id from trajectories where model = ? and outcome <> 'error'", [model]
        ).rows
    }
    rows = [r for r in queries.records(queries.task_difficulty(store)) if r["task_id"] in tasks]
    expected = sum(1 / (1 + math.exp(-r["discrimination"] * (theta - r["difficulty"]))) for r in rows) / len(rows)
    assert capability.value == pytest.approx(expected)
    assert f"averaged over the {len(rows)} tasks {model} was measured on" in capability.evidence
    assert "on the median task" in capability.evidence
