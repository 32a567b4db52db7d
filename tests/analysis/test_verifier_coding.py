"""The verifier coder over a real store: trial codes on Terminal-Bench trials (real-shaped
fixtures), completion codes on rollouts scored in the real sandbox, reliability by construction,
and a plan that acts on them without a single label."""

from __future__ import annotations

import json

import pytest

from curriculab.analysis import queries
from curriculab.analysis.coding import COMPLETION_ONLY, NO_TESTS, TRIAL_ONLY, run_verifier_coder
from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.taxonomy.coders.verifier import COMPLETION_CODES, TRIAL_CODES


def _statuses(store: Store) -> dict[tuple[str, str], tuple[str, str | None]]:
    _, rows = store.query("select trajectory_id, code, status, reason from coding_status where coder = 'verifier'")
    return {(t, c): (s, r) for t, c, s, r in rows}


def test_terminal_bench_trials_get_trial_codes_from_their_parser_results(store, fixtures):
    ingest(store, [fixtures / "tb"], fmt="tb", workers=1)
    report = run_verifier_coder(store)
    statuses = _statuses(store)
    _, trials = (
        store.query("""select t.trajectory_id, t.outcome, t.harness_error, count(r.test_id), count(r.test_id) filter (r.passed)
                               from trajectories t left join test_results r using (trajectory_id) group by all""")
    )
    assert report.trajectories == len(trials)
    for trajectory_id, outcome, harness_error, tests, passed in trials:
        if tests == 0:
            assert all(
                statuses[(trajectory_id, c)] == ("not_applicable", NO_TESTS) for c in (*COMPLETION_CODES, *TRIAL_CODES)
            )
            continue
        assert all(statuses[(trajectory_id, c)] == ("not_applicable", COMPLETION_ONLY) for c in COMPLETION_CODES)
        present = {c for c in TRIAL_CODES if statuses[(trajectory_id, c)][0] == "present"}
        if outcome != "failed":
            assert present == set()
            continue
        profile = "all_tests_fail" if passed == 0 else "near_miss" if 2 * passed >= tests else "partial_pass"
        assert profile in present or passed == tests
        assert ("test_timeout" in present) == (harness_error == "test_timeout")
    _, failed_with_tests = store.query("""select count(distinct t.trajectory_id) from trajectories t join test_results r
                                          using (trajectory_id) where t.outcome = 'failed'""")
    _, coded = store.query("""select count(distinct trajectory_id) from failure_codes where coder = 'verifier'
                              and trajectory_id in (select trajectory_id from trajectories where outcome = 'failed')""")
    assert (
        failed_with_tests[0][0] > 0 and coded[0][0] == failed_with_tests[0][0]
    )  # every failed trial with tests is coded
    reliability = queries.records(queries.code_reliability(store, "verifier"))
    assert {r["code"] for r in reliability} == set(COMPLETION_CODES) | set(TRIAL_CODES)
    assert all(r["method"] == "verifier" and r["reliable"] and not r["in_sample"] for r in reliability)


def _rollouts(tmp_path, completions: list[tuple[str, str]], model: str = "probe@round1") -> str:
    """Completions for the built-in `add` problem, scored in the real sandbox, as rollout lines."""
    from curriculab.training.problems import builtin_problems
    from curriculab.training.rewards import Scorer
    from curriculab.training.rollouts import completion_record

    problem = next(p for p in builtin_problems() if p.entry_point == "add")
    results = Scorer({problem.problem_id: problem}).run(
        [problem.problem_id] * len(completions), [c for c, _ in completions]
    )
    run = {
        "run_id": "grpo-test",
        "agent": "curriculab-grpo",
        "model": "probe",
        "dataset": "grpo-rollouts",
        "source_format": "jsonl",
        "config": {},
    }
    path = tmp_path / "rollouts.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                completion_record(
                    trajectory_id=f"grpo-test/{k}",
                    run=run,
                    model=model,
                    problem=problem,
                    attempt=k,
                    prompt=problem.prompt,
                    completion=text,
                    result=result,
                    reward=0.0,
                    finish=finish,
                    completion_tokens=10,
                )
            )
            + "\n"
            for k, ((text, finish), result) in enumerate(zip(completions, results))
        )
    )
    return str(path)


BROKEN = ("def add(a, b):\n    return a + b\n```\nThe plus operator adds them.", "stop")
RIGHT = ("```python\ndef add(a, b):\n    return a + b\n```", "stop")


def test_rollouts_get_a_status_for_every_completion_code_and_evidence(store, tmp_path):
    wrong = ("```python\ndef add(a, b):\n    return a - b\n```", "stop")
    ingest(store, [_rollouts(tmp_path, [BROKEN, RIGHT, wrong, ("Add them.", "length")])], fmt="jsonl", workers=1)
    run_verifier_coder(store, run_id="grpo-test")
    statuses = _statuses(store)
    for k in range(4):
        assert all(statuses[(f"grpo-test/{k}", c)][0] in ("present", "absent") for c in COMPLETION_CODES)
        assert all(statuses[(f"grpo-test/{k}", c)] == ("not_applicable", TRIAL_ONLY) for c in TRIAL_CODES)
    present = lambda k: {c for c in COMPLETION_CODES if statuses[(f"grpo-test/{k}", c)][0] == "present"}  # noqa: E731
    assert present(0) == {"broken_code_block"} and present(1) == set()
    assert present(2) == {"wrong_answer_basic"} and present(3) == {"no_code", "truncated"}
    _, rows = store.query("select evidence_steps, rationale from failure_codes where trajectory_id = 'grpo-test/2'")
    assert rows[0][0] == [1] and "failing:" in rows[0][1]  # the completion step, and the failing tests
    again = run_verifier_coder(store, run_id="grpo-test", uncoded_only=True)
    assert again.trajectories == 0  # a checkpoint codes only what is new


def test_a_plan_acts_on_rollout_codes_without_labels(store, tmp_path):
    from curriculab.training.problems import builtin_problems

    ingest(store, [_rollouts(tmp_path, [BROKEN] * 14 + [RIGHT] * 2)], fmt="jsonl", workers=1)
    run_verifier_coder(store)
    assert queries.labels(store).empty
    made = planning.build_plan(store, "probe@round1", builtin_problems(), "builtin")
    assert made.reward_functions[-1] == "format_reward" and made.reward_weights[-1] > 0.3
    assert any(
        r.startswith("reward: format_reward added") and "broken_code_block 100.0% of 14 judged failures" in r
        for r in made.reasons
    )
    used = {c["code"] for c in made.codes if c["used"]}
    assert used == {"broken_code_block"}
    config = planning.training_config(made)
    assert config.reward.functions == made.reward_functions and config.reward.weights == made.reward_weights


@pytest.mark.parametrize("coders, expected", [(("rules",), False), (("rules", "verifier"), True)])
def test_the_plan_reads_the_coders_it_is_given(store, tmp_path, coders, expected):
    from curriculab.training.problems import builtin_problems

    ingest(store, [_rollouts(tmp_path, [BROKEN] * 10)], fmt="jsonl", workers=1)
    run_verifier_coder(store)
    made = planning.build_plan(store, "probe@round1", builtin_problems(), "builtin", coders=coders)
    assert ("format_reward" in made.reward_functions) is expected


def test_the_report_has_a_section_for_training_runs_and_their_rollout_codes(store, tmp_path):
    from curriculab.analysis.report import build_report, to_markdown

    ingest(store, [_rollouts(tmp_path, [BROKEN] * 3 + [RIGHT])], fmt="jsonl", workers=1)
    run_verifier_coder(store)
    report = build_report(store)
    assert [(r["run_id"], r["rollouts"], r["failed"], r["passed"]) for r in report["training_runs"]] == [
        ("grpo-test", 4, 3, 1)
    ]
    assert [(r["code"], r["n"], r["failures"]) for r in report["rollout_codes"]] == [("broken_code_block", 3, 3)]
    text = to_markdown(report)
    assert "## Rollout failure codes by training run" in text and "| grpo-test | broken_code_block | 3 | 3 |" in text
