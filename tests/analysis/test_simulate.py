"""The simulator is seeded, varied, and its planted behaviours are really in the steps."""

import filecmp
from collections import Counter

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.labels import import_labels
from curriculab.analysis.simulate import LANGUAGES, simulate_corpus
from curriculab.analysis.store import Store

pytestmark = pytest.mark.slow  # simulated corpora


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("sim")
    summary = simulate_corpus(root / "corpus", n_tasks=54, attempts=3, seed=5)
    with Store(root / "sim.duckdb") as store:
        report = ingest(store, [summary.root], workers=1)
        assert report.errors == []
        # the planted truth, stored the way people's labels are
        assert import_labels(store, summary.root / "ground_truth.csv", "truth").errors == []
        yield summary, store


def test_same_seed_same_corpus(tmp_path):
    a = simulate_corpus(tmp_path / "a", n_tasks=9, attempts=2, seed=1)
    b = simulate_corpus(tmp_path / "b", n_tasks=9, attempts=2, seed=1)
    c = simulate_corpus(tmp_path / "c", n_tasks=9, attempts=2, seed=2)
    files = sorted(p.relative_to(a.root) for p in a.root.rglob("trajectory.json"))
    assert files == sorted(p.relative_to(b.root) for p in b.root.rglob("trajectory.json"))
    assert all(filecmp.cmp(a.root / f, b.root / f, shallow=False) for f in files)
    assert filecmp.cmp(a.root / "ground_truth.csv", b.root / "ground_truth.csv", shallow=False)
    assert not filecmp.cmp(a.root / "ground_truth.csv", c.root / "ground_truth.csv", shallow=False)


def test_tasks_span_languages_types_scales_and_tiers(sim):
    _, store = sim
    langs, types, tiers = (
        set(r[0] for r in store.query(f"select distinct {c} from tasks").rows)
        for c in ("language", "task_type", "tier_authored")
    )
    assert langs == set(LANGUAGES) and len(langs) == 9
    assert len(types) >= 5 and tiers == {"basic", "intermediate", "complex"}
    assert {r[0] for r in store.query("select distinct tags[2] from tasks").rows} == {"small", "medium", "large"}
    assert store.query("select count(*) from tasks where n_milestones > 0").scalar() > 0


def test_models_differ_in_skill_and_behaviour(sim):
    _, store = sim
    pass_rate = dict(
        store.query(
            "select model, avg((outcome = 'passed')::int) from trajectories where outcome <> 'error' group by 1"
        ).rows
    )
    assert pass_rate["atlas-7b-coder"] < pass_rate["borealis-32b"] < pass_rate["cirrus-large"]
    rates = store.query("""select model, code, avg(present::int) from (select * from labels where annotator = 'truth') truth join trajectories using (trajectory_id)
                           group by all""").rows
    by = {(m, c): r for m, c, r in rates}
    assert (
        max(("atlas-7b-coder", "borealis-32b", "cirrus-large"), key=lambda m: by[(m, "skipped_verification")])
        == "atlas-7b-coder"
    )
    assert (
        max(("atlas-7b-coder", "borealis-32b", "cirrus-large"), key=lambda m: by[(m, "no_plan_revision")])
        == "borealis-32b"
    )


def test_planted_skipped_verification_means_no_run_after_the_last_edit(sim):
    _, store = sim
    rows = store.query("""
        with last_edit as (select trajectory_id, max(step_idx) as at from steps where action = 'edit' group by 1),
             verified as (select s.trajectory_id, count(*) > 0 as ok from steps s join last_edit l using (trajectory_id)
                          where s.action = 'run' and s.step_idx > l.at group by 1)
        select t.present, coalesce(v.ok, false), count(*) from (select * from labels where annotator = 'truth') t
        join trajectories j using (trajectory_id) left join verified v using (trajectory_id)
        where t.code = 'skipped_verification' and j.outcome <> 'error' group by all""").rows
    table = {(present, verified): n for present, verified, n in rows}
    assert table.get((True, True), 0) == 0 and table.get((False, False), 0) == 0
    assert table[(True, False)] > 0 and table[(False, True)] > 0


def test_planted_harness_failures_are_error_outcomes(sim):
    _, store = sim
    rows = store.query("""select t.present, j.outcome = 'error', count(*) from (select * from labels where annotator = 'truth') t join trajectories j using (trajectory_id)
                          where t.code = 'harness_failure' group by all""").rows
    assert {(p, e) for p, e, _ in rows} == {(True, True), (False, False)}


def test_planted_redundant_rework_rereads_an_unchanged_file(sim):
    _, store = sim
    rows = store.query("""
        with reads as (select trajectory_id, path, count(*) as n from steps where action = 'read' and path is not null
                       and not output_truncated group by 1, 2)
        select t.present, max(r.n) > 1 from (select * from labels where annotator = 'truth') t left join reads r using (trajectory_id)
        where t.code = 'redundant_rework' group by t.trajectory_id, t.present""").rows
    counts = Counter(rows)
    assert counts[(True, True)] > 0 and counts[(True, False)] == 0
