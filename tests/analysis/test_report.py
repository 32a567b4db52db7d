"""Analyst views with hand-computed expectations, and the report on a simulated corpus."""

import json

import pytest
from click.testing import CliRunner

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.common import add_trajectory
from curriculab.analysis.labels import import_labels
from curriculab.analysis.report import _figures, build_report
from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import RowBatch, Store
from curriculab.cli import cli
from curriculab.trajectory.model import Trajectory

pytestmark = pytest.mark.slow  # a coded and fitted simulated corpus


def test_pass_rates_keep_harness_errors_apart(store, fixtures):
    ingest(store, [fixtures / "tb" / "2025-08-20__12-00-00", fixtures / "tb" / "tasks"], workers=1)
    # this run: 4 trials, 1 passed, 2 failed (one of them after a test timeout: the verdict stands,
    # flagged), 1 harness error with no verdict (is_resolved null)
    row = store.query(
        "select attempts, passes, pass_rate, ci_low, ci_high, harness_errors, flagged from v_pass_rates "
        "where dimension = 'overall'"
    ).rows[0]
    assert row[:3] == (3, 1, pytest.approx(1 / 3)) and row[5:] == (1, 1)
    assert row[3:5] == pytest.approx((0.06149, 0.79234), abs=1e-4)  # Wilson 1/3 by hand
    tiers = dict(store.query("select value, attempts from v_pass_rates where dimension = 'tier'").rows)
    assert tiers == {"basic": 2, "intermediate": 1}


def _code(store, statuses):
    """Record what a coder found, as coders do: a status for each (trajectory, code), a row for each finding."""
    store.replace_codes(
        "rules",
        "v1",
        sorted({t for t, _, _ in statuses}),
        [(t, c, 1.0, [], "planted") for t, c, s in statuses if s == "present"],
        [(t, c, s, None) for t, c, s in statuses],
    )


def _traj(tid, model, outcome):
    return Trajectory(trajectory_id=tid, run_id="r", task_id=f"task-{tid}", model=model, outcome=outcome)


def test_failure_distribution_is_a_share_of_failures_with_its_interval(store):
    batch = RowBatch()
    for i in range(10):
        add_trajectory(batch, _traj(f"a{i}", "m1", "failed" if i < 8 else "passed"), f"h{i}", "jsonl", "x")
    store.write_batch(batch)
    # skipped_verification: present on a0-a2, judged on all 8 failures; tool_misuse: present on
    # a3 (and a9, which passed: not a failure, not counted), judged on 4 of the 8 failures only
    statuses = [(f"a{i}", "skipped_verification", "present" if i < 3 else "absent") for i in range(10)]
    statuses += [
        (f"a{i}", "tool_misuse", "present" if i in (3, 9) else "absent" if i < 4 else "not_applicable")
        for i in range(10)
    ]
    _code(store, statuses)
    rows = {
        r[0]: r[1:]
        for r in store.query("""select code, n, applied, failures, share, coverage, ci_low, ci_high
                                                 from v_failure_distribution where dimension = 'overall' order by code""").rows
    }
    assert rows["skipped_verification"][:5] == (3, 8, 8, 3 / 8, 1.0)
    assert rows["skipped_verification"][5:] == pytest.approx((0.13684, 0.69425), abs=1e-4)  # Wilson 3/8
    assert rows["tool_misuse"][:5] == (1, 4, 8, 1 / 4, 0.5)  # the share is over the failures the coder could judge


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    corpus = simulate_corpus(root / "corpus", n_tasks=72, attempts=5, seed=9)
    db = root / "db.duckdb"
    with Store(db) as store:
        ingest(store, [corpus.root], workers=1)
        run_rule_coders(store)
        import_labels(store, corpus.root / "ground_truth.csv", "simulator")
        from curriculab.analysis.labels import agreement

        agreement(store, "rules", "simulator")
        fit_store(store)
    with Store(db, read_only=True) as store:  # a report only reads
        report = build_report(store)
    return root, corpus, db, report


def test_report_shows_each_models_planted_top_failure_with_its_interval(sim):
    *_, report = sim
    tops = {m: rows[0] for m, rows in report["top_failure_modes"].items()}
    # atlas has the highest planted skipped-verification rate, borealis no-plan-revision, cirrus redundant rework
    assert tops["atlas-7b-coder"]["code"] == "skipped_verification"
    assert tops["borealis-32b"]["code"] == "no_plan_revision"
    assert tops["cirrus-large"]["code"] == "redundant_rework"
    t = tops["atlas-7b-coder"]
    assert 0 < t["ci_low"] < t["share"] < t["ci_high"] < 1 and t["reliable"] is True
    # systems are the unit by default: the finding names the system (agent · model), its row has the time column
    assert any(
        f.endswith(" · atlas-7b-coder: the top failure mode is skipped_verification, in " + f.split(", in ")[1])
        and "95% CI" in f
        and "for planning: used: reliable" in f
        for f in report["findings"]
        if ", in " in f
    )
    first = next(r for r in report["system_failure_modes"] if r["system"].endswith(" · atlas-7b-coder"))
    assert first["code"] == "skipped_verification" and first["timed_out"] == 0


def test_report_difficulty_finds_the_miscalibrated_tasks(sim):
    import csv

    _, corpus, db, report = sim
    with Store(db, read_only=True) as store:
        measured = dict(store.query("select task_id, difficulty from irt_tasks").rows)
    truth = {r["task_id"]: float(r["difficulty_true"]) for r in csv.DictReader(open(corpus.root / "truth_tasks.csv"))}
    from scipy.stats import spearmanr

    common = sorted(measured)
    assert spearmanr([measured[t] for t in common], [truth[t] for t in common]).statistic > 0.6
    held = report["difficulty"]["held_out"]
    assert held["held_out"] > 100 and held["irt_auc"] > held["baseline_auc"]
    assert report["difficulty"]["calibration"] and report["difficulty"]["misplaced"]
    assert all(s["tasks"] > 0 and 0 <= s["share_in_band"] <= 1 for s in report["signal"])
    assert {p["model"] for p in report["pass_at_k"]} == {"atlas-7b-coder", "borealis-32b", "cirrus-large"}
    assert all(p["pass@1"] <= p["pass@5"] for p in report["pass_at_k"])


def test_bottleneck_is_the_code_every_model_ranks_first(store):
    batch = RowBatch()
    codes = []
    for model, n in (("m1", 6), ("m2", 6)):
        for i in range(n):
            tid = f"{model}-{i}"
            add_trajectory(batch, _traj(tid, model, "failed"), tid, "jsonl", "x")
            codes.append((tid, "skipped_verification" if i < 4 else "tool_misuse"))
    store.write_batch(batch)
    _code(
        store,
        [(t, c, "present") for t, c in codes]
        + [(t, other, "absent") for t, c in codes for other in ("skipped_verification", "tool_misuse") if other != c],
    )
    store.save_reliability(
        "rules",
        "ann",
        "v1",
        [(code, 50, 0.9, 0.9, 0.6, True, False, "jsonl/unknown") for code in ("skipped_verification", "tool_misuse")],
    )
    report = build_report(store)
    assert "skipped_verification is the top failure mode of every one of the 2 systems." in report["findings"]
    pooled = build_report(store, by="model")  # pooling by model only when asked
    assert [b["code"] for b in pooled["bottlenecks"]] == ["skipped_verification"]
    assert any(
        f.startswith("Bottleneck: skipped_verification is the top failure mode for every model")
        for f in pooled["findings"]
    )


def test_report_cli_in_three_formats_and_errors(sim, tmp_path):
    _, _, db, _ = sim

    def run(*a):
        return CliRunner().invoke(cli, ["--db", str(db), *a], catch_exceptions=False)

    md = run("report", "--model", "borealis-32b")
    assert md.exit_code == 0 and md.stdout.startswith("# curriculab report — borealis-32b")
    assert "| no_plan_revision |" in md.stdout
    data = json.loads(run("report", "--json").stdout)
    assert {"overview", "top_failure_modes", "bottlenecks", "difficulty", "signal", "milestones", "findings"} <= set(
        data
    )
    page = tmp_path / "r.html"
    result = run("report", "--html", "-o", str(page))
    assert result.exit_code == 0 and result.stdout == f"Wrote {page}\n"
    text = page.read_text()
    # standalone: five charts (systems ranked, too), plotly.js embedded once, nothing fetched from the network
    assert text.count('class="plotly-graph-div"') == 5 and len(text) > 1_000_000
    assert '<script src="http' not in text and "<script src='http" not in text
    missing = run("report", "--model", "nobody")
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: no attempts for model 'nobody' in the store.")
    bad_band = run("report", "--band", "0.9", "0.1")
    assert bad_band.exit_code == 1 and "is not a range inside [0, 1]" in bad_band.stderr


def test_difficulty_cli_exports_the_pinned_fields(sim):
    _, _, db, _ = sim

    def run(*a):
        return CliRunner().invoke(cli, ["--db", str(db), *a], catch_exceptions=False)

    tasks = json.loads(run("difficulty", "--json").stdout)
    flagged = json.loads(run("tasks", "health", "--flagged", "--json").stdout)
    # the simulated corpus's 72 tasks: one no model solved in its 12 attempts by 3 systems
    assert len(flagged) == 1 and flagged[0]["health"] == "never solved: possibly broken"
    assert len(tasks) == 72 - len(flagged) and flagged[0]["task_id"] not in {t["task_id"] for t in tasks}
    assert {"task_id", "difficulty", "discrimination", "difficulty_se", "n_attempts", "pass_rate"} <= set(tasks[0])
    assert tasks[0]["difficulty"] >= tasks[-1]["difficulty"]  # hardest first
    models = json.loads(run("difficulty", "--models", "--json").stdout)
    assert [m["model"] for m in models] == ["cirrus-large", "borealis-32b", "atlas-7b-coder"]  # planted ability order


def test_views_after_a_fit(sim):
    from curriculab.analysis import queries

    _, _, db, _ = sim
    with Store(db, read_only=True) as store:
        informative = store.query(
            "select count(*), count(*) filter (in_band), min(signal) >= 0, max(signal) <= 0.25 from v_informative_tasks"
        ).rows[0]
        fitted = 72 - len(queries.task_health.records(store, flagged_only=True))  # flagged tasks are not fitted
        assert fitted == 71
        assert informative[0] == 3 * fitted and 0 < informative[1] < 3 * fitted and informative[2] and informative[3]
        narrow = store.query("select count(*) filter (in_band) from informative_tasks(0.45, 0.55)").scalar()
        assert narrow < informative[1]
        funnel = store.query("select sum(attempts) from v_milestone_funnel").scalar()
        milestoned = store.query(
            "select count(*) from trajectories where milestones_total > 0 and outcome <> 'error'"
        ).scalar()
        assert funnel == milestoned > 0
        assert store.query("select count(*) from v_coder_agreement where reliable and family = ''").scalar() == 6
        assert store.query("select count(*) from v_task_difficulty").scalar() == fitted


def _plain_numbers(rows):
    # a frame holds an integer column with NULLs as floats; DuckDB's rows keep the ints. Two runs of
    # one read may differ in a double's last bit (DuckDB's parallel avg sums in thread order)
    def plain(v):
        if isinstance(v, float) and v == v:
            return int(v) if v.is_integer() else float(f"{v:.12g}")
        return v

    return [{k: plain(v) for k, v in row.items()} for row in rows]


def test_every_sql_read_gives_the_same_rows_without_pandas(sim):
    from curriculab.analysis import queries

    _, _, db, _ = sim
    reads = {name: read for name, read in vars(queries).items() if isinstance(read, queries.SqlRead)}
    assert {"pass_rates", "failure_distribution", "failure_clusters", "failure_code_pairs", "attempt_evidence"} <= set(
        reads
    )
    with Store(db, read_only=True) as store:
        empty = set()
        for name, read in reads.items():
            framed, plain = queries.records(read(store)), read.records(store)
            assert _plain_numbers(plain) == _plain_numbers(framed), name
            if not plain:
                empty.add(name)
        assert empty <= {"training_runs", "rollout_codes", "quarantined_inputs", "unknown_models"}  # no GRPO run here


def test_the_reads_the_report_batches_equal_the_ones_they_replace(sim):
    from itertools import combinations

    from curriculab.analysis import queries

    _, _, db, _ = sim
    with Store(db, read_only=True) as store:
        both = queries.failure_distribution.records(store, dimension=("overall", "tier"))
        for dimension in ("overall", "tier"):
            assert [r for r in both if r["dimension"] == dimension] == queries.failure_distribution.records(
                store, dimension=dimension
            )
        clusters = {
            (r["model"], r["code"]): (r["present"], r["applied"]) for r in queries.failure_clusters.records(store)
        }
        cells: dict = {}
        for r in queries.failure_cells.records(store):
            present, applied = cells.setdefault((r["model"], r["code"]), ([], []))
            present.append(r["present"])
            applied.append(r["applied"])
        assert clusters == cells
        # the co-occurrence the report counted in Python, pair by pair in trajectory order, is the oracle
        sets = [row["codes"] for row in queries.failed_code_sets.records(store)]
        single: dict = {}
        pairs: dict = {}
        for codes in sets:
            for c in codes:
                single[c] = single.get(c, 0) + 1
            for a, b in combinations(sorted(codes), 2):
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
        expected = sorted(
            (
                {"code_a": a, "code_b": b, "n": n, "lift": n * len(sets) / (single[a] * single[b])}
                for (a, b), n in pairs.items()
            ),
            key=lambda r: -r["n"],
        )
        assert len(expected) >= 6 and len({r["n"] for r in expected}) < len(expected)  # ties to order
        assert queries.failure_code_pairs.records(store, top=len(expected) + 1) == expected
        assert queries.failure_code_pairs.records(store, top=4) == expected[:4]


def test_one_pass_over_a_coders_failures_gives_each_read_it_replaces(sim, tmp_path):
    import shutil

    from curriculab.analysis import queries

    _, _, db, _ = sim
    copy = tmp_path / "copy.duckdb"
    shutil.copy(db, copy)
    with Store(copy) as store:  # a third of one model's attempts a training run's: per system they drop out
        store.run_statements(
            [
                (
                    "insert into runs (run_id, agent, model) values ('grpo', ?, 'atlas-7b-coder')",
                    [queries.TRAINING_AGENT],
                ),
                (
                    "update trajectories set run_id = 'grpo' where model = 'atlas-7b-coder' and hash(task_id) % 3 = 0",
                    [],
                ),
            ]
        )
    with Store(copy, read_only=True) as store:
        for model in (None, "atlas-7b-coder"):
            coded = {"coder": "rules", "model": model, "taxonomy_version": "v6"}
            (one,) = queries.failure_sections.records(store, **coded)
            assert list(one) == [
                "distribution",
                "system_distribution",
                "share_clusters",
                "system_clusters",
                "coverage",
                "pairs",
                "timeouts",
            ]
            system = queries.failure_distribution.records(
                store, coder="rules", taxonomy_version="v6", scope=queries.Scope(model=model)
            )
            assert {r["system"] for r in system} == {r["system"] for r in one["system_distribution"]}
            assert not any(r["agent"] == queries.TRAINING_AGENT for r in system)
            assert one == {
                "distribution": queries.failure_distribution.records(store, **coded, dimension=("overall", "tier")),
                "system_distribution": system,
                "share_clusters": queries.failure_clusters.records(store, **coded),
                "system_clusters": queries.failure_clusters.records(store, **coded, by="system"),
                "coverage": queries.coder_coverage.records(store, **coded),
                "pairs": queries.failure_code_pairs.records(store, **coded),
                "timeouts": queries.code_timeouts.records(store, **coded),
            }
            # the other reads count every kind of attempt
            assert any(r["system"].startswith(f"{queries.TRAINING_AGENT} · ") for r in one["system_clusters"])


def test_a_report_process_never_imports_pandas_nor_the_validated_taxonomy(sim):
    import subprocess
    import sys

    _, _, db, _ = sim
    script = (
        "import sys\nfrom curriculab.analysis.report import build_report, to_markdown\n"
        "from curriculab.analysis.store import Store\n"
        f"text = to_markdown(build_report(Store({str(db)!r}, read_only=True)))\n"
        "assert 'milestone 1.0' not in text, text\n"
        "print(sorted(m for m in ('pandas', 'pyarrow', 'pydantic', 'curriculab.taxonomy.taxonomy') if m in sys.modules))\n"
    )
    # the planner's answer per code reads `planner_view`: building the validated taxonomy (pydantic)
    # was a third of the report's imports
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_held_out_check_is_stored_with_the_fit_and_read_while_the_fit_is_current(sim, tmp_path):
    import shutil

    from curriculab.analysis import queries
    from curriculab.analysis.difficulty import held_out_check

    _, _, db, report = sim
    with Store(db, read_only=True) as store:
        stored = queries.stored_held_out.records(store)
        assert stored == [held_out_check(store).__dict__]
        assert report["difficulty"]["held_out"] == {**stored[0], "computed": "with the stored fit"}
    copy = tmp_path / "copy.duckdb"
    shutil.copy(db, copy)
    with Store(copy) as store:
        store.run_statements([("update irt_checks set held_out = -1", [])])
        assert build_report(store)["difficulty"]["held_out"]["held_out"] == -1  # read, not refitted
        run_id, task_id, model = store.query("select run_id, task_id, model from trajectories limit 1").rows[0]
        add = RowBatch()
        add_trajectory(
            add,
            Trajectory(
                trajectory_id="late-attempt", run_id=run_id, task_id=task_id, model=model, outcome="failed", attempt=99
            ),
            "late",
            "jsonl",
            "x",
        )
        store.write_batch(add)
        held = build_report(store)["difficulty"]["held_out"]
        # a stale fit: checked afresh, and said so
        assert held == {**held_out_check(store).__dict__, "computed": "now, for this report: no current fit is stored"}
        assert held["held_out"] > 0


def test_report_tables_round_figures_half_up_from_their_exact_values():
    from curriculab.analysis.report import half_up

    # the leaderboard's run figures: 197/400 and 235/400 are 0.4925 and 0.5875 exactly
    assert [half_up(197 / 400), half_up(235 / 400), half_up(0.0005), half_up(-0.0005)] == [
        "0.493",
        "0.588",
        "0.001",
        "-0.001",
    ]
    assert half_up(2 / 3) == "0.667" and half_up(1.0) == "1.000" and half_up(float("nan")) == "nan"


def test_before_a_difficulty_fit_exists_the_report_does_not_say_its_sections_are_from_one(store, fixtures):
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.report import build_report

    ingest(store, [fixtures / "tb-leaderboard"], workers=1)
    findings = build_report(store)["findings"]
    assert (
        "No difficulty fit is stored: the sections below show no fitted difficulty, tiers or signal. "
        "Fit one with `curriculab difficulty` or `curriculab report --refit`." in findings
    )
    assert not any("are from it" in f for f in findings)


def test_timeouts_are_a_reading_of_their_own_per_system_and_task_in_the_report_and_the_plan(store, tmp_path):
    """A system whose failures mostly ran out of time gets findings and plan reasons about time and its
    long tasks, and its test codes are not read as 'easier tasks of the same kind'."""
    from curriculab.analysis import queries
    from curriculab.analysis.coding import run_verifier_coder
    from curriculab.planner.evidence import failure_targets, time_reading
    from tests.conftest import leaderboard_that_mostly_times_out

    source = leaderboard_that_mostly_times_out(tmp_path)
    ingest(store, [source], workers=1)
    run_verifier_coder(store)
    recorded = {}  # a recount from the trials' own files: (task, failure_mode) of each failed trial
    for results in source.rglob("*/results.json"):
        trial = json.loads(results.read_text())
        if "cursor-cli" in str(results) and trial.get("is_resolved") is False:
            recorded[trial["trial_name"]] = (trial["task_id"], trial["failure_mode"])
    endings = {e["system"]: e for e in queries.failure_endings.records(store)}
    cursor = endings["cursor-cli · claude-sonnet-4-20250514"]
    timed = sorted(task for task, mode in recorded.values() if mode == "agent_timeout")
    assert (cursor["failures"], cursor["timed_out"]) == (len(recorded), len(timed)) == (4, 3)
    assert cursor["to_verdict"] == cursor["failures"] - cursor["timed_out"] - cursor["crashed"]
    by_task = queries.failure_endings.records(store, by="task")
    assert sorted(t["task_id"] for t in by_task if t["timed_out"] and t["system"] == cursor["system"]) == timed

    report = build_report(store)
    said = [f for f in report.findings if f.startswith("cursor-cli · claude-sonnet-4-20250514: 3 of its 4 failures")]
    assert len(said) == 1 and "ran out of time: its failures are about time and long tasks" in said[0]
    assert all(task in said[0] for task in timed)
    assert not any(f.startswith("goose · claude-opus-4-1-20250805") and "ran out of time" in f for f in report.findings)
    modes = report.top_failure_modes["claude-sonnet-4-20250514"]
    assert next(r for r in modes if r["code"] == "all_tests_fail")["timed_out"] == 3

    decisions, _ = failure_targets(store, "claude-sonnet-4-20250514", "verifier")
    failing = next(d for d in decisions if d.code == "all_tests_fail")
    assert not failing.used and failing.reason.startswith("not read as difficulty: 3 of its")
    timing = time_reading(store, "claude-sonnet-4-20250514")
    assert timing.startswith("time: 3 of claude-sonnet-4-20250514's 4 failures (75%) ran out of time")
    assert time_reading(store, "claude-opus-4-1-20250805") is None  # its one fault is a crash, not time


def test_task_health_flags_never_and_always_solved_tasks_and_keeps_them_out_until_checked(store, tmp_path):
    from curriculab.analysis import queries
    from curriculab.analysis.difficulty import fit_store
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    ingest(store, [leaderboard_with_a_broken_and_a_trivial_task(tmp_path)], workers=1)
    assert queries.HEALTH_MIN_ATTEMPTS == 10 and queries.HEALTH_MIN_SYSTEMS == 3
    health = {r["task_id"]: r for r in queries.task_health.records(store)}
    broken, trivial, mixed = health["nginx-request-logging"], health["hello-world"], health["fix-permissions"]
    assert (broken["attempts"], broken["systems"], broken["passes"]) == (12, 3, 0)
    assert (broken["health"], broken["flagged"]) == ("never solved: possibly broken", True)
    assert (trivial["health"], trivial["flagged"]) == ("always solved: possibly trivial", True)
    assert (mixed["health"], mixed["flagged"], mixed["systems_solved"]) == ("ok", False, 3)
    matrix = {(r["system"], r["task_id"]): r for r in queries.solve_matrix.records(store)}
    assert len(matrix) == 9 and matrix[("terminus · gpt-5", "hello-world")]["solved"] == 1.0
    # flagged tasks stay out of the fit, the held-out check and the capability evidence
    fit = fit_store(store)
    assert fit.tasks == ["fix-permissions"]
    report = build_report(store)
    flagged = [f for f in report.findings if f.startswith("Task health:")]
    assert len(flagged) == 1 and "nginx-request-logging (never solved: possibly broken; 12 attempts" in flagged[0]
    assert "hello-world (always solved: possibly trivial" in flagged[0]
    assert {r["task_id"] for r in report.task_health if r["flagged"]} == {"nginx-request-logging", "hello-world"}
    # a person checks the broken one: it counts again
    store.check_tasks(["nginx-request-logging"], note="solvable: the oracle passes")
    assert not next(r for r in queries.task_health.records(store) if r["task_id"] == "nginx-request-logging")["flagged"]
    assert fit_store(store).tasks == ["fix-permissions", "nginx-request-logging"]


def test_systems_are_the_unit_where_agents_share_a_model_with_each_systems_run_spread(store, tmp_path):
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    shared = ("20250818_goose_claude-opus-4-1", "20250820_terminus_claude-opus-4-1", "20250821_codex_o3")
    ingest(store, [leaderboard_with_a_broken_and_a_trivial_task(tmp_path, submissions=shared)], workers=1)
    report = build_report(store)
    assert report.by == "system"  # two agents ran claude-opus-4-1: its model row pools them
    systems = {f"{s['agent']} · {s['model']}": s for s in report.systems}
    goose = systems["goose · claude-opus-4-1-20250805"]
    # four runs of three tasks: fix-permissions passes on runs 0 and 2 → runs score 2/3, 1/3, 2/3, 1/3
    assert goose["run_accuracies"] == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1 / 3])
    assert (goose["run_low"], goose["run_high"]) == pytest.approx((1 / 3, 2 / 3))
    assert goose["leaderboard_accuracy"] == pytest.approx(0.5)
    assert {c["higher_system"] for c in report.system_comparisons} | {
        c["lower_system"] for c in report.system_comparisons
    } == set(systems)
    assert {e["system"] for e in report.system_pass_at_k} == set(systems)
    # abilities from a fit whose unit is the system need two unflagged tasks: fix-permissions alone
    # is not enough, and with hello-world checked back in they are fitted
    assert report.system_abilities == []
    store.check_tasks(["hello-world"])
    checked = build_report(store)
    abilities = {a["system"]: a for a in checked.system_abilities}
    assert set(abilities) == set(systems) and all(a["ability_se"] > 0 for a in abilities.values())
    # each system's informative band, from the same fit: its two fitted tasks, in the band or not
    assert all(a["tasks"] == 2 and a["share_in_band"] == a["in_band"] / 2 for a in abilities.values())
    # the report's charts are per system: none pools a model's agents
    charts = {f.layout.title.text: f for f in _figures(checked)}
    assert not any("Pooled" in title for title in charts)
    (ability,) = [f for t, f in charts.items() if t.startswith("System abilities θ")]
    assert set(ability.data[0].y) == set(systems)
    (signal,) = [f for t, f in charts.items() if t.startswith("Signal per system")]
    assert [set(bar.x) for bar in signal.data] == [set(systems), set(systems)]
    (modes,) = [f for t, f in charts.items() if t.startswith("Top failure modes per system")] or [None]
    assert modes is None or {bar.name for bar in modes.data} <= set(systems)
    said = next(f for f in report.findings if f.startswith("Systems (agent · model) are the unit here"))
    assert "(33.3%–66.7% over 4 runs)" in said
    assert not any(" passes " in f and "of attempts" in f for f in report.findings)  # no per-model ranking sentence
    by_model = build_report(store, by="model")
    assert by_model.by == "model" and by_model.system_abilities == []
    assert any(f.startswith("Pooled by model") for f in by_model.findings)
    # asked for models pooled, the charts say so and name the systems' agents each model pools
    pooled = [f.layout.title.text for f in _figures(by_model) if not f.layout.title.text.startswith("Systems")]
    assert pooled and all(t.startswith("Pooled by model — ") for t in pooled)
    assert all("claude-opus-4-1-20250805: goose, terminus" in t for t in pooled)
    with pytest.raises(ValueError, match="by 'system' or 'model', not 'agent'"):
        build_report(store, by="agent")


def test_percentages_round_half_up_in_the_report_and_on_the_pages():
    from curriculab.analysis.report import percent_text
    from curriculab.dashboard.common import percent, percent_of

    # the leaderboard's own figures: 197/400 and 47/80 sit exactly on a half
    assert [percent_text(x) for x in (197 / 400, 47 / 80, 0.36, 0.525)] == ["49.3%", "58.8%", "36.0%", "52.5%"]
    assert f"{197 / 400:.1%}" == "49.2%"  # what binary rounding printed
    assert [percent(197, 400), percent(47, 80), percent(9, 25), percent(1, 3), percent(2, 3)] == [
        "49.3%",
        "58.8%",
        "36.0%",
        "33.3%",
        "66.7%",
    ]
    assert [percent_of(197 / 400), percent_of(None), percent_of(float("nan")), percent(0, 0)] == [
        "49.3%",
        "–",
        "–",
        "–",
    ]


def test_pass_at_k_is_over_the_same_tasks_for_every_system_and_names_those_short_of_k():
    from curriculab.analysis.report import _pass_at_k
    from curriculab.analysis.stats import pass_at_k

    # (passes, attempts) per task: A has only 2 attempts on t3, B never tried it
    cells = {("A",): {"t1": (1, 5), "t2": (0, 5), "t3": (2, 2)}, ("B",): {"t1": (5, 5), "t2": (1, 5)}}
    a, b = _pass_at_k(cells, "system", "attempts with a verdict")
    assert (a["system"], b["system"]) == ("A", "B")
    # k = 5 over the tasks both have 5 attempts on (t1, t2), not over each one's own subset
    assert a["tasks@5"] == b["tasks@5"] == 2 and a["pass@5"] == (pass_at_k(5, 1, 5) + pass_at_k(5, 0, 5)) / 2
    assert (a["short@5"], a["short_tasks@5"]) == (1, "t3") and (b["short@5"], b["short_tasks@5"]) == (1, "t3")
    assert a["tasks@1"] == 2 and b["short@1"] == 1  # t3 has no attempt of B: said, not dropped silently
