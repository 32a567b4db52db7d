"""Problem sets in the shapes public code-RL sets are published in (LiveCodeBench's LeetCode-style
functional problems, CodeContests' and APPS' stdin/stdout programs; our own problems, written in
their shapes): every reference scores 1.0 in the sandbox, every wrong solution fails, and the
verifier's codes say why."""

import json
from pathlib import Path

import pytest

from curriculab.taxonomy.coders.verifier import TestEvidence, code_completion
from curriculab.training.problem_formats import read_problem_set
from curriculab.training.problems import ProblemError
from curriculab.training.sandbox import Limits, run_many
from curriculab.training.sandbox.server import output_mismatch

SETS = Path(__file__).parents[1] / "fixtures" / "problem-sets"
LIMITS = Limits(test_timeout_s=10.0, load_timeout_s=10.0)


def wrong_solutions(shape):
    records = [json.loads(line) for line in (SETS / f"{shape}.jsonl").read_text().splitlines()]
    if shape == "codecontests":
        return [r["incorrect_solutions"]["solution"][0] for r in records]
    return [r["wrong"] for r in records]


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape,file,at_least",
    [("livecodebench", "livecodebench-functional", 20), ("codecontests", "codecontests", 10), ("apps", "apps", 10)],
)
def test_references_score_one_and_wrong_solutions_fail(shape, file, at_least):
    problems = read_problem_set(SETS / f"{file}.jsonl", shape)
    assert len(problems) >= at_least
    references = run_many([p.job(p.reference) for p in problems], LIMITS, workers=2)
    failing = {
        p.problem_id: [(o.test_id, o.detail) for o in r.outcomes if not o.passed] for p, r in zip(problems, references)
    }
    assert {k: v for k, v in failing.items() if v} == {}
    wrong = run_many([p.job(code) for p, code in zip(problems, wrong_solutions(file))], LIMITS, workers=2)
    for problem, result in zip(problems, wrong):
        assert not all(o.passed for o in result.outcomes), problem.problem_id
        evidence = [
            TestEvidence(o.test_id, t.tier, o.passed, o.status, o.detail)
            for o, t in zip(result.outcomes, problem.tests)
        ]
        codes = {
            c
            for c, f in code_completion(
                "```python\n" + wrong_solutions(file)[problems.index(problem)] + "\n```",
                evidence,
                entry_point=problem.entry_point or None,
            ).items()
            if f.present
        }
        assert codes & {"wrong_answer_basic", "wrong_answer_beyond_basic", "runtime_error", "undefined_name"}, (
            problem.problem_id,
            codes,
        )


def test_the_leetcode_shape_becomes_class_method_tests_with_the_node_classes():
    (problem, *_) = read_problem_set(SETS / "livecodebench-functional.jsonl", "livecodebench")
    assert problem.entry_point == "Solution" and problem.kind == "class"
    assert problem.tests[0].code == "assert Solution().arraySum([1, 2, 3]) == 6" and problem.tests[0].tier == "basic"
    assert "class ListNode" in problem.prelude and "class TreeNode" in problem.prelude


def test_a_stdin_program_is_judged_by_its_tokens():
    assert output_mismatch("3\n", "3") is None
    assert output_mismatch("1  2\n3", "1 2 3\n") is None
    assert output_mismatch("0.3333333\n", "0.333333333") is None  # within 1e-6
    assert output_mismatch("0.34\n", "0.333333333") == "token 1: expected '0.333333333', got '0.34'"
    assert (
        output_mismatch("10\n", "10.0") is None and output_mismatch("10\n", "11") == "token 1: expected '11', got '10'"
    )
    assert output_mismatch("1 2 3", "1 2") == "expected 2 tokens, got 3 (first extra: '3')"


def test_output_past_the_cap_fails_that_test_saying_so():
    program = "import sys\nsys.stdout.write('x' * (2 << 20))\n"
    result = run_many([(program, "", [("t", {"stdin": "", "stdout": "x"})])], Limits(file_bytes=1 << 20))[0]
    assert (result.outcomes[0].status, result.outcomes[0].detail) == (
        "output_limit",
        "printed more than 1,048,576 bytes (the output cap)",
    )


def test_a_bad_record_names_its_line_and_field(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"problem_id": 1, "question": "q", "solutions": "[]", "input_output": "{}"}) + "\n")
    with pytest.raises(
        ProblemError, match=r"set.jsonl: line 1: field solutions: no solution to use as the reference. Fix the record"
    ):
        read_problem_set(path, "apps")


def test_import_keeps_the_good_records_of_a_file_and_names_the_bad_one(cli_run, tmp_path):
    source = tmp_path / "codecontests.jsonl"
    good = (SETS / "codecontests.jsonl").read_text().splitlines()[:2]
    source.write_text("\n".join([good[0], '{"name": "broken"}', good[1]]) + "\n")
    output = tmp_path / "problems.jsonl"
    result = cli_run("problems", "import", str(source), "--shape", "codecontests", "-o", str(output))
    assert result.exit_code == 0, result.output
    assert "Wrote 2 problems" in result.output and "1 bad records, 0 rejected" in result.output
    assert f"{source}: line 2: field " in result.output
    checked = cli_run("problems", "check", str(output))
    assert checked.exit_code == 0 and checked.output.startswith("2 of 2 problems pass their reference"), checked.output


def test_livecodebench_private_cases_are_read_as_published_and_a_pickle_that_names_code_is_refused(tmp_path):
    import base64
    import os
    import pickle
    import zlib

    record = json.loads((SETS / "livecodebench-functional.jsonl").read_text().splitlines()[0])
    cases = record["private_test_cases"]
    # the release's own encoding of the private cases: JSON text, pickled, compressed, base64
    record["private_test_cases"] = base64.b64encode(zlib.compress(pickle.dumps(cases))).decode()
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (encoded,) = read_problem_set(path, "livecodebench")
    (plain,) = read_problem_set(SETS / "livecodebench-functional.jsonl", "livecodebench")[:1]
    assert [t.code for t in encoded.tests] == [t.code for t in plain.tests]
    # a pickle naming a callable is refused before anything is built (os.getcwd would be harmless; it is never called)
    record["private_test_cases"] = base64.b64encode(zlib.compress(pickle.dumps(os.getcwd))).decode()
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(
        ProblemError,
        match=r"line 1: field private_test_cases: .*the pickle names posix.getcwd; only plain values are read",
    ):
        read_problem_set(path, "livecodebench")
