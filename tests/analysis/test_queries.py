"""The read API: every pinned query returns a DataFrame with its documented columns, filters are
bound (never pasted into SQL), and a read-only store is enough."""

import pandas as pd
import pytest

from curriculab.analysis import queries
from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store
from curriculab.taxonomy.taxonomy import NEWEST

PINNED = {
    "attempts": [
        "trajectory_id",
        "run_id",
        "agent",
        "model",
        "model_raw",
        "task_id",
        "attempt",
        "outcome",
        "harness_error",
        "flagged",
        "tier",
        "task_type",
        "language",
        "n_steps",
        "actions_logged",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "system",
    ],
    "pass_rates": [
        "model",
        "dimension",
        "value",
        "attempts",
        "passes",
        "pass_rate",
        "ci_low",
        "ci_high",
        "harness_errors",
        "flagged",
    ],
    "failure_distribution": [
        "coder",
        "taxonomy_version",
        "model",
        "code",
        "dimension",
        "value",
        "n",
        "applied",
        "failures",
        "share",
        "coverage",
        "ci_low",
        "ci_high",
    ],
    "task_difficulty": [
        "task_id",
        "task_type",
        "language",
        "tier_authored",
        "difficulty_authored",
        "measured_tier",
        "difficulty",
        "difficulty_se",
        "discrimination",
        "discrimination_se",
        "n_attempts",
        "pass_rate",
        "misplaced",
    ],
    "model_abilities": ["model", "ability", "ability_se", "n_attempts", "pass_rate", "kind"],
    "informative_tasks": [
        "model",
        "task_id",
        "attempts",
        "passes",
        "observed_pass_rate",
        "predicted_pass_rate",
        "signal",
        "in_band",
    ],
    "code_reliability": [
        "coder",
        "annotator",
        "code",
        "taxonomy_version",
        "n",
        "kappa",
        "f1",
        "threshold",
        "reliable",
        "computed_at",
        "in_sample",
        "method",
        "family",
    ],
    "coder_agreement": [
        "coder",
        "annotator",
        "code",
        "taxonomy_version",
        "n",
        "kappa",
        "f1",
        "threshold",
        "reliable",
        "computed_at",
        "family",
    ],
    "milestone_funnel": ["model", "task_type", "milestones_total", "first_failed_milestone", "attempts"],
    "test_failure_rates": ["task_id", "tier", "tests", "results", "failures", "failure_rate"],
    "plans": [
        "plan_id",
        "created_at",
        "target_model",
        "strategy",
        "allocation",
        "weights",
        "task_mix",
        "reasons",
        "config_yaml",
        "plan",
        "kind",
    ],
    "training_curves": ["run_id", "step", "name", "value"],
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from tests.conftest import FIXTURES

    path = tmp_path_factory.mktemp("queries") / "store.duckdb"
    with Store(path) as store:
        ingest(store, [FIXTURES / "tb", FIXTURES / "harbor", FIXTURES / "harbor-agents"], workers=1)
        run_rule_coders(store)
        fit_store(store)
    return path


@pytest.fixture
def reader(db):
    with Store(db, read_only=True) as store:
        yield store


@pytest.mark.parametrize("name", sorted(PINNED))
def test_every_pinned_query_returns_its_documented_columns(reader, name):
    frame = getattr(queries, name)(reader)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == PINNED[name]


def test_filters_narrow_and_are_bound_never_pasted(reader):
    everything = queries.attempts(reader)
    mine = queries.attempts(reader, model="claude-haiku-4-5-20251001")
    assert 0 < len(mine) < len(everything) and set(mine["model"]) == {"claude-haiku-4-5-20251001"}
    assert queries.attempts(reader, model="x' or '1'='1").empty  # a value, not SQL
    by_tier = queries.pass_rates(reader, slice="tier")
    assert set(by_tier["dimension"]) == {"tier"}
    with pytest.raises(ValueError, match="slice 'planet' is not one of overall, task, tier, task_type, language"):
        queries.pass_rates(reader, slice="planet")


def test_failure_distribution_defaults_to_the_coders_newest_taxonomy(reader):
    frame = queries.failure_distribution(reader, "rules")
    assert set(frame["taxonomy_version"]) == {NEWEST} and (frame["applied"] <= frame["failures"]).all()


def test_one_trajectory_with_the_codes_citing_each_step(reader):
    steps = queries.trajectory(reader, "2025-08-20__12-00-00/hello-world.2-of-2.2025-08-20__12-00-00")
    cited = steps[steps["codes"].map(len) > 0]
    assert list(cited["codes"].iloc[0]) == ["rules:skipped_verification"]
    with pytest.raises(ValueError, match="no trajectory 'nope' in the store"):
        queries.trajectory(reader, "nope")


def test_the_report_builds_from_a_read_only_store(reader):
    from curriculab.analysis.report import build_report

    report = build_report(reader)
    assert report.overview and report["difficulty"]["fit"]["current_fit"]


def test_reads_never_write(db):
    import hashlib

    before = hashlib.blake2b(db.read_bytes()).hexdigest()
    with Store(db, read_only=True) as store:
        for name in PINNED:
            getattr(queries, name)(store)
    assert hashlib.blake2b(db.read_bytes()).hexdigest() == before


def test_a_scope_narrows_every_scoped_query_to_its_attempts(reader):
    everything = queries.attempts(reader, scope=queries.EVERYTHING)
    agent = everything["agent"].dropna().iloc[0]
    mine = queries.attempts(reader, scope=queries.Scope(agent=agent, kind="all"))
    assert 0 < len(mine) < len(everything) and set(mine["agent"]) == {agent}
    assert set(mine["system"]) == {f"{agent} · {m}" for m in mine["model"]}
    assert queries.attempts(reader, scope=queries.Scope(agent="x' or '1'='1")).empty  # a value, not SQL
    board = queries.systems(reader, scope=queries.Scope(agent=agent))
    assert set(board["agent"]) == {agent} and board["attempts"].sum() == (mine["outcome"] != "error").sum()
    shares = queries.failure_distribution(reader, scope=queries.Scope(agent=agent))
    assert set(shares["agent"]) <= {agent} and {"system", "share", "coverage"} <= set(shares.columns)
    assert queries.Scope().active() == {"kind": "evaluation"} and queries.EVERYTHING.active() == {}
    with pytest.raises(ValueError, match="kind 'eval' is not one of evaluation, training, all"):
        queries.Scope(kind="eval")
    with pytest.raises(ValueError, match="a scoped failure distribution is overall only"):
        queries.failure_distribution(reader, scope=queries.Scope(), dimension="tier")


def test_records_gives_plain_values_row_by_row_as_to_dict_did(reader):
    frame = reader.frame("""select * from (values
        (1, 2.5, 'a', [1, 2], timestamp '2026-01-02 03:04:05', true, null::double, {'k': 1}),
        (2, null, null, [], null, null, 0.5, null)) as t(i, f, s, l, ts, b, d, st)""")
    expected = [{k: queries.core._plain(v) for k, v in row.items()} for row in frame.to_dict("records")]
    got = queries.records(frame)
    assert got == expected and [list(r) for r in got] == [list(r) for r in expected]
    assert [type(v) for v in got[0].values()] == [type(v) for v in expected[0].values()]
    assert got[1]["f"] is None and got[1]["s"] is None and got[0]["d"] is None and got[0]["l"] == [1, 2]
    assert queries.records(frame.iloc[0:0]) == []


def test_pass_rates_per_authored_tier_take_their_interval_from_the_one_wilson_in_sql(reader):
    # the SQL macro is the interval every view reports; stats.wilson_interval is its Python twin
    from curriculab.analysis.stats import wilson_interval

    grid = [(k, n) for n in (1, 2, 7, 40, 1000) for k in sorted({0, 1, n // 3, n - 1, n})]
    _, rows = reader.query(
        "select k, n, wilson_low(k, n), wilson_high(k, n) from (select unnest(?) as k, unnest(?) as n)",
        [[k for k, _ in grid], [n for _, n in grid]],
    )
    for k, n, low, high in rows:
        assert (low, high) == pytest.approx(wilson_interval(k, n), abs=1e-12), (k, n)
    tiers = queries.authored_tier_pass_rates(reader)
    attempts = queries.attempts(reader)
    assert list(tiers.columns) == ["tier", "attempts", "passes", "pass_rate", "ci_low", "ci_high", "harness_errors"]
    assert int(tiers["attempts"].sum()) == int((attempts["outcome"] != "error").sum())
    for row in tiers.itertuples():
        assert (row.ci_low, row.ci_high) == pytest.approx(wilson_interval(row.passes, row.attempts))
    assert tiers["pass_rate"].is_monotonic_decreasing
    one_tier = queries.authored_tier_pass_rates(reader, scope=queries.Scope(tier=tiers["tier"].iloc[0]))
    assert list(one_tier["tier"]) == [tiers["tier"].iloc[0]]


def test_the_trajectory_list_says_how_many_match_beyond_its_limit(store, fixtures):
    from curriculab.analysis.ingest import ingest

    ingest(store, [fixtures / "tb-leaderboard"], workers=1)
    total = store.query("select count(*) from trajectories").scalar()
    first = queries.trajectory_list(store, limit=2)
    assert len(first) == 2 and set(first["matched"]) == {total} and total > 2
    failed = queries.trajectory_list(store, outcome="failed", limit=1)
    assert set(failed["matched"]) == {
        store.query("select count(*) from trajectories where outcome = 'failed'").scalar()
    }
