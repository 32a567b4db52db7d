"""What the report may claim: task-clustered intervals, rankings it can resolve, failure shares
only with coverage and a reliable coder, and tiers the measurements (not two labels) decide."""

import numpy as np
import pytest

from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.ingest.common import add_trajectory
from curriculab.analysis.irt import measured_tiers
from curriculab.analysis.report import build_report
from curriculab.analysis.stats import cluster_bootstrap, cluster_bootstrap_difference, wilson_interval
from curriculab.analysis.store import RowBatch
from curriculab.trajectory.model import Task, Trajectory


def test_clustered_attempts_widen_the_interval_and_independent_ones_do_not():
    # 20 tasks x 10 attempts, half the attempts pass either way
    clustered = cluster_bootstrap([10] * 10 + [0] * 10, [10] * 20)  # each task all-pass or all-fail
    spread = cluster_bootstrap([5] * 20, [10] * 20)  # every task passes half its attempts
    low, high = wilson_interval(100, 200)
    assert clustered[1] - clustered[0] > 2 * (high - low)  # the Wilson interval is far too narrow here
    assert spread == (0.5, 0.5)  # nothing varies between tasks: resampling tasks changes nothing
    assert cluster_bootstrap([10] * 10 + [0] * 10, [10] * 20) == clustered  # seeded: same data, same interval
    assert cluster_bootstrap([], []) == (None, None)


def test_a_difference_is_resolved_only_when_its_interval_excludes_zero():
    same = cluster_bootstrap_difference([3, 7, 5, 1], [10] * 4, [4, 6, 5, 2], [10] * 4)
    assert same[0] < 0 < same[1]
    apart = cluster_bootstrap_difference([9] * 8, [10] * 8, [1] * 8, [10] * 8)
    assert apart[0] > 0.5


def _store_with(store, failures: int, judged: int, present: int, reliable: bool | None):
    """One model, `failures` failed attempts over distinct tasks; the coder judged `judged` of them
    and found skipped_verification in `present`."""
    batch = RowBatch()
    for i in range(failures + 2):
        add_trajectory(
            batch,
            Trajectory(
                trajectory_id=f"t{i}",
                run_id="r",
                task_id=f"task{i % 5}",
                model="m1",
                outcome="failed" if i < failures else "passed",
            ),
            f"h{i}",
            "jsonl",
            "x",
        )
    store.write_batch(batch)
    statuses = [
        (f"t{i}", "skipped_verification", "present" if i < present else "absent" if i < judged else "not_applicable")
        for i in range(failures)
    ]
    store.replace_codes(
        "rules",
        "v1",
        [t for t, _, _ in statuses],
        [(t, c, 1.0, [], "planted") for t, c, s in statuses if s == "present"],
        [(t, c, s, "evidence missing" if s == "not_applicable" else None) for t, c, s in statuses],
    )
    if reliable is not None:
        store.save_reliability(
            "rules",
            "ann",
            "v1",
            # measured on the family these trajectories come from (jsonl with no agent named)
            [("skipped_verification", 40, 0.8 if reliable else 0.3, 0.8, 0.6, reliable, False, "jsonl/unknown")],
        )


def _top_finding(report):
    # systems are the unit: these trajectories name no agent, so the system is "(unknown) · m1"
    return next(f for f in report["findings"] if f.startswith("(unknown) · m1:") and "failure mode" in f)


def test_low_coverage_withholds_the_top_failure_mode_and_says_what_is_missing(store):
    _store_with(store, failures=10, judged=2, present=2, reliable=True)
    report = build_report(store)
    assert _top_finding(report) == (
        "(unknown) · m1: no top failure mode stated — skipped_verification leads (2 of 2 judged failures) "
        "but the coder could judge only 2 of 10 failures (20.0%; 50.0% needed)."
    )
    (row,) = report["top_failure_modes"]["m1"]
    assert (row["share"], row["coverage"]) == (1.0, 0.2)


def test_unmeasured_agreement_withholds_it_too(store):
    _store_with(store, failures=10, judged=10, present=4, reliable=None)
    assert _top_finding(build_report(store)).endswith(
        "but the coder's agreement with people on this code is not measured (`curriculab agreement`)."
    )


def test_with_coverage_and_a_reliable_coder_the_finding_is_stated_with_its_clustered_interval(store):
    _store_with(store, failures=10, judged=8, present=4, reliable=True)
    finding = _top_finding(build_report(store))
    assert finding.startswith(
        "(unknown) · m1: the top failure mode is skipped_verification, in 50.0% of the failures the coder could "
        "judge (4 of 8; 95% CI over tasks "
    )
    assert finding.endswith("coverage 80.0% of 10 failures; for planning: used: reliable (κ 0.80 on 40)).")


def _tasks_with_authored(store, n_tasks: int, authored: dict[str, str]):
    batch = RowBatch()
    rng = np.random.default_rng(0)
    for j in range(n_tasks):
        task = Task(task_id=f"k{j:02d}", tier_authored=authored.get(f"k{j:02d}"))
        for m, ability in (("a", -1.0), ("b", 0.0), ("c", 1.0)):
            for attempt in range(3):
                passed = rng.random() < 1 / (1 + np.exp(-(ability - (j - n_tasks / 2) / 5)))
                add_trajectory(
                    batch,
                    Trajectory(
                        trajectory_id=f"{m}-{j}-{attempt}",
                        run_id="r",
                        task_id=task.task_id,
                        model=m,
                        attempt=attempt,
                        outcome="passed" if passed else "failed",
                        task=task,
                    ),
                    f"{m}{j}{attempt}",
                    "jsonl",
                    "x",
                )
    store.write_batch(batch)


def test_two_authored_labels_do_not_recut_the_measured_tiers(store):
    _tasks_with_authored(store, 30, {"k00": "complex", "k01": "complex"})
    fit_store(store)
    counts = dict(store.query("select measured_tier, count(*) from irt_tasks group by 1").rows)
    assert counts == {"basic": 10, "intermediate": 10, "complex": 10}  # tertiles of the measured scale


def test_equal_difficulty_gets_equal_tiers():
    tiers = measured_tiers(np.array([0.5, 0.5, 0.5, 1.0, -1.0, 0.5]))
    assert len({t for t, d in zip(tiers, [0.5, 0.5, 0.5, 1.0, -1.0, 0.5]) if d == 0.5}) == 1


@pytest.mark.parametrize("model", [None, "m1"])
def test_the_report_runs_on_a_store_with_one_model(store, model):
    _store_with(store, failures=4, judged=4, present=1, reliable=False)
    report = build_report(store, model=model)
    assert report["comparisons"] == []
    assert _top_finding(report).endswith("below threshold.")
