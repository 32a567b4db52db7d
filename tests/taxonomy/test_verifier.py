"""Verifier-derived codes (taxonomy v3): decided from the sandbox's real per-test verdicts and the
completion's text; held against hand-labelled real SmolLM2 completions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curriculab.taxonomy.coders.verifier import (
    COMPLETION_CODES,
    TRIAL_CODES,
    TestEvidence,
    code_completion,
    code_trial,
    has_code,
    is_prose_line,
)
from curriculab.taxonomy.completion import extract_code
from curriculab.taxonomy.taxonomy import load_taxonomy

LABELLED = Path(__file__).resolve().parents[1] / "fixtures" / "rollouts" / "smollm2_labelled.jsonl"


def _evidence(problem, result) -> list[TestEvidence]:
    tiers = {t.test_id: t.tier for t in problem.tests}
    return [TestEvidence(o.test_id, tiers[o.test_id], o.passed, o.status, o.detail) for o in result.outcomes]


def _present(found) -> set[str]:
    return {code for code, finding in found.items() if finding.present}


def test_v3_maps_every_v2_code_to_itself_and_adds_the_verifier_codes():
    v3 = load_taxonomy("v3")
    v2 = load_taxonomy("v2")
    assert v3.maps_from == "v2" and all(v3.map_code(c, "v2") == [c] for c in v2.code_names)
    assert set(COMPLETION_CODES) | set(TRIAL_CODES) <= set(v3.code_names)
    for code in (*COMPLETION_CODES, *TRIAL_CODES):
        target = v3.get(code).target
        assert target is not None and (target.tiers or target.reward_term or not target.curriculum_effect), code


@pytest.fixture(scope="module")
def add_two():
    from curriculab.training.problems import builtin_problems
    from curriculab.training.rewards import Scorer

    problem = next(p for p in builtin_problems() if p.entry_point == "add")
    return problem, Scorer({problem.problem_id: problem})


@pytest.mark.parametrize(
    "completion, finish, expected",
    [
        ("```python\ndef add(a, b):\n    return a + b\n```", "stop", set()),
        ("To add two numbers, use the plus operator on them.", "stop", {"no_code"}),
        ("```python\ndef add(a, b):\n    return a +", "length", {"broken_code_block", "truncated"}),
        ("True", "stop", {"no_code"}),
        ("```python\ndef add(a, b)\n    return a + b\n```", "stop", {"syntax_error"}),
        ("```python\ndef plus(a, b):\n    return a + b\n```", "stop", {"entry_point_mismatch"}),
        ("```python\ndef add(numbers):\n    return sum(numbers)\n```", "stop", {"entry_point_mismatch"}),
        ("def add(a, b):\n    return a + b\n```\nThe plus operator adds them.", "stop", {"broken_code_block"}),
        ("Here is the completed function:\n\ndef add(a, b):\n    return a + b\n", "stop", {"broken_code_block"}),
        ("```\n\n```python\ndef add(a, b):\n    return a - b\n```", "stop", {"broken_code_block"}),
        ("```python\ndef add(a, b):\n    return helper(a, b)\n```", "stop", {"undefined_name"}),
        ("```python\nimport numpy_not_here\ndef add(a, b):\n    return a + b\n```", "stop", {"undefined_name"}),
        ("```python\ndef add(a, b):\n    return [a][b]\n```", "stop", {"runtime_error"}),
        pytest.param(
            "```python\ndef add(a, b):\n    while True:\n        pass\n```", "stop", {"timeout"}, marks=pytest.mark.slow
        ),
        ("```python\ndef add(a, b):\n    return a - b\n```", "stop", {"wrong_answer_basic"}),
    ],
)
def test_completion_codes_come_from_real_sandbox_verdicts(add_two, completion, finish, expected):
    problem, scorer = add_two
    result = scorer.run([problem.problem_id], [completion])[0]
    found = code_completion(completion, _evidence(problem, result), finish, problem.entry_point)
    assert set(found) == set(COMPLETION_CODES)  # every code has a status
    assert _present(found) == expected, [(o.status, o.detail) for o in result.outcomes]
    for code in expected - {"truncated", "no_code", "broken_code_block"}:
        assert found[code].tests, code  # the failing tests that show it


def test_a_wrong_answer_only_beyond_basic_tests_is_told_apart_from_one_on_basic(add_two):
    problem, scorer = add_two  # basic tests add positives; intermediate and edge ones use negatives
    completion = "```python\ndef add(a, b):\n    if a < 0 or b < 0:\n        return 0\n    return a + b\n```"
    result = scorer.run([problem.problem_id], [completion])[0]
    found = code_completion(completion, _evidence(problem, result), "stop", problem.entry_point)
    assert _present(found) == {"wrong_answer_beyond_basic"}
    assert "intermediate" in found["wrong_answer_beyond_basic"].rationale


def test_a_completion_that_catches_its_own_error_and_returns_is_a_wrong_answer_not_a_runtime_error():
    tests = [
        TestEvidence("t0", "basic", False, "failed", "assertion failed"),
        TestEvidence("t1", "edge", False, "failed", "raised ZeroDivisionError: division by zero"),
    ]
    found = code_completion("```python\ndef f(x):\n    return 1 / x\n```", tests, "stop")
    assert _present(found) == {"wrong_answer_basic", "runtime_error"}
    assert "ZeroDivisionError" in found["runtime_error"].rationale


def test_what_counts_as_code_prose_and_a_broken_block():
    assert not has_code("The answer is to add them.") and not has_code("True") and not has_code("")
    assert has_code("def add(a, b):\n    return a + b") and has_code("x = 1") and has_code("```\nprint(1)\n```")
    assert is_prose_line("Here is the completed function:") and is_prose_line("Example usage:")
    assert is_prose_line("This uses `max()` to find it, as the docs say.")  # inline code is still prose
    assert not is_prose_line("    return a + b") and not is_prose_line("True") and not is_prose_line("Foo = Bar(1)")
    assert is_prose_line("  can iterate through each element in a list and check it.", anywhere=True)
    assert not is_prose_line("        if x % y == 0, x /= y", anywhere=True)
    assert (
        extract_code("```python\ndef add(a, b):\n    return a + b\n```\n```python\nprint(add(1, 2))\n```", "add")
        == "def add(a, b):\n    return a + b\n"
    )  # the defining block, not the usage example after it


def test_trial_codes_read_the_test_profile_and_the_harness():
    def tests(passed: int, total: int, status: str = "failed") -> list[TestEvidence]:
        return [TestEvidence(f"t{k}", None, k < passed, "passed" if k < passed else status) for k in range(total)]

    assert _present(code_trial(tests(0, 4), "failed")) == {"all_tests_fail"}
    assert _present(code_trial(tests(1, 4), "failed")) == {"partial_pass"}
    assert _present(code_trial(tests(2, 4), "failed")) == {"near_miss"}
    assert _present(code_trial(tests(3, 4), "failed", "test_timeout")) == {"near_miss", "test_timeout"}
    assert _present(code_trial(tests(4, 4), "failed")) == set()  # failed for a reason the tests do not show
    assert _present(code_trial(tests(0, 4), "passed")) == set()
    assert _present(code_trial(tests(0, 4, "timeout"), "failed")) == {"all_tests_fail", "test_timeout"}


def _labelled() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]


def test_the_hand_labelled_set_is_real_and_large_enough():
    records = _labelled()
    assert len(records) >= 100
    assert all(r["model"] == "SmolLM2-135M-Instruct" for r in records)
    assert all(set(r["labels"]) == set(COMPLETION_CODES) for r in records)  # every code labelled, present or not
    positives = {code: sum(r["labels"][code] for r in records) for code in COMPLETION_CODES}
    assert all(n >= 5 for n in positives.values()), positives
    assert {r["split"] for r in records} == {"development", "held-out-1", "held-out-2", "targeted"}


def test_the_labelled_verdicts_are_what_the_sandbox_gives_today():
    # the labels were made against stored verdicts: a change to the sandbox or to code extraction
    # that changes them would leave the labels describing something else
    from curriculab.training.problems import builtin_problems, humaneval_problems
    from curriculab.training.rewards import Scorer

    records = _labelled()[::6]
    problems = {p.problem_id: p for p in builtin_problems() + humaneval_problems(40)}
    results = Scorer(problems).run([r["problem_id"] for r in records], [r["completion"] for r in records])
    for record, result in zip(records, results):
        stored = [(t["test_id"], t["passed"], t["status"]) for t in record["tests"]]
        assert [(o.test_id, o.passed, o.status) for o in result.outcomes] == stored, record["completion_id"]


def test_precision_and_recall_per_code_against_hand_labels_are_at_least_0_9():
    from curriculab.taxonomy.agreement import binary_agreement

    records = _labelled()
    coded = [
        code_completion(
            r["completion"],
            [TestEvidence(t["test_id"], t["tier"], t["passed"], t["status"], t["detail"]) for t in r["tests"]],
            r["finish_reason"],
            r["entry_point"],
        )
        for r in records
    ]
    scores = {}
    for code in COMPLETION_CODES:
        a = binary_agreement([c[code].present for c in coded], [r["labels"][code] for r in records])
        if a.tp + a.fn:
            scores[code] = (a.precision or 0.0, a.recall)
    assert scores and all(p >= 0.9 and r >= 0.9 for p, r in scores.values()), scores
