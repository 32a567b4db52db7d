"""Tiered problems, reference checks, TAROT rewards with the TRL signature, and `curriculab reward`."""

import dataclasses
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from curriculab.cli import cli
from curriculab.planner.portfolio import TierCurriculum
from curriculab.taxonomy.completion import extract_code
from curriculab.training.problems import (
    ProblemError,
    builtin_problems,
    humaneval_problems,
    load_problems,
    retier,
    save_problems,
    verify_references,
)
from curriculab.training.rewards import make_reward_functions, score_completions
from curriculab.training.sandbox import Limits


@pytest.fixture(scope="module")
def builtin():
    return builtin_problems()


def test_the_builtin_set_has_40_problems_with_two_tests_per_tier(builtin):
    assert len(builtin) >= 40
    for p in builtin:
        assert all(len(tests) >= 2 for tests in p.tier_tests().values()), p.problem_id


@pytest.mark.slow
def test_every_reference_scores_1_on_every_tier(builtin):
    results = score_completions(
        builtin,
        [{"problem_id": p.problem_id, "completion_id": p.problem_id, "completion": p.reference} for p in builtin],
    )
    bad = [
        (r["problem_id"], r["pass_rate"], r["status"])
        for r in results
        if r["reward"] != 1.0 or any(v != 1.0 for v in r["pass_rate"].values())
    ]
    assert bad == []


def test_wrong_solutions_score_0_on_the_tiers_they_break(builtin):
    wrong = [
        (
            "curriculab/roman",
            "def to_roman(n):\n    out = ''\n    for v, l in [(1000, 'M'), (500, 'D'), (100, 'C'), (50, 'L'), (10, 'X'), (5, 'V'), (1, 'I')]:\n"
            "        while n >= v:\n            out += l\n            n -= v\n    return out\n",
            {"basic": 1.0, "intermediate": 0.0},
        ),
        (
            "curriculab/reverse_string",
            "def reverse(s):\n    return s[::-1] if len(s) > 1 else None\n",
            {"basic": 1.0, "edge": 0.0},
        ),
        (
            "curriculab/maximum",
            "def maximum(xs):\n    return max(xs)\n",
            {"basic": 1.0, "intermediate": 1.0, "edge": 0.5},
        ),
        (
            "curriculab/add_two",
            "def add(a, b):\n    return a - b\n",
            {"basic": 0.0, "intermediate": 0.0, "complex": 0.0},
        ),
    ]
    results = score_completions(builtin, [{"problem_id": p, "completion_id": p, "completion": c} for p, c, _ in wrong])
    for (pid, _, expected), result in zip(wrong, results):
        for tier, rate in expected.items():
            assert result["pass_rate"][tier] == rate, (pid, tier, result)
        assert result["reward"] < 1.0


def test_code_is_taken_from_the_last_python_block():
    assert extract_code("text\n```python\nx = 1\n```\nmore\n```python\nx = 2\n```\n") == "x = 2\n"
    assert extract_code("def f():\n    return 1") == "def f():\n    return 1"
    solution_then_example = "```python\ndef f():\n    return 1\n```\nUsage:\n```python\nprint(f())\n```\n"
    assert extract_code(solution_then_example, "f") == "def f():\n    return 1\n"  # the block that defines it
    assert extract_code(solution_then_example) == "print(f())\n"


def test_a_reference_that_fails_its_own_test_is_rejected_naming_the_test(builtin):
    broken = dataclasses.replace(builtin[0], reference="def add(a, b):\n    return a + b if a >= 0 else 0\n")
    kept, rejected = verify_references([broken, builtin[1]])
    assert [p.problem_id for p in kept] == [builtin[1].problem_id]
    assert rejected == [
        "curriculab/add_two: reference fails test 'intermediate_1' (failed: assertion failed); problem rejected"
    ]


def test_loader_errors_name_the_line_and_field(tmp_path, builtin):
    path = save_problems(builtin[:2], tmp_path / "p.jsonl")
    assert [p.problem_id for p in load_problems(path)] == [p.problem_id for p in builtin[:2]]
    record = json.loads(path.read_text().splitlines()[1])
    record["tests"][0]["tier"] = "expert"
    path.write_text(path.read_text().splitlines()[0] + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ProblemError) as err:
        load_problems(path)
    assert str(err.value) == (
        f"{path}: line 2: field tests.0.tier: Input should be 'basic', 'intermediate', 'complex' or 'edge'. "
        "Fix the record"
    )
    with pytest.raises(ProblemError, match="problem_id 'curriculab/add_two' appears twice"):
        save_problems([builtin[0], builtin[0]], path)
        load_problems(path)


@pytest.mark.parametrize(
    "change, field, message",
    [
        (lambda r: r.update(extra=1), "extra", "Extra inputs are not permitted"),
        (lambda r: r.pop("reference"), "reference", "Field required"),
        (lambda r: r.update(problem_id=""), "problem_id", "String should have at least 1 character"),
        (lambda r: r.update(prompt=7), "prompt", "Input should be a valid string"),
        (lambda r: r.update(entry_point="not a name"), "entry_point", "String should match pattern"),
        (lambda r: r.update(tests=[]), "tests", "List should have at least 1 item"),
        (lambda r: r.update(tests="assert f()"), "tests", "Input should be a valid list"),
        (lambda r: r["tests"].__setitem__(0, "assert f()"), "tests.0", "Input should be a valid dictionary"),
        (lambda r: r["tests"][0].pop("code"), "tests.0.code", "Field required"),
        (lambda r: r["tests"][0].update(weight=2), "tests.0.weight", "Extra inputs are not permitted"),
        (
            lambda r: r["tests"][1].update(test_id=r["tests"][0]["test_id"]),
            "(record)",
            "appears 2 times; make test ids unique",
        ),
        (lambda r: r.update(source=3), "source", "Input should be a valid string"),
    ],
)
def test_every_bad_record_is_refused_naming_its_line_and_field(tmp_path, builtin, change, field, message):
    path = save_problems(builtin[:2], tmp_path / "p.jsonl")
    first, second = path.read_text().splitlines()
    record = json.loads(second)
    change(record)
    path.write_text(first + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ProblemError) as err:
        load_problems(path)
    assert str(err.value).startswith(f"{path}: line 2: field {field}: ")
    assert message in str(err.value) and str(err.value).endswith(". Fix the record")


def test_saved_problems_read_back_equal_and_are_immutable(tmp_path, builtin):
    path = save_problems(builtin, tmp_path / "p.jsonl")
    assert load_problems(path) == builtin
    with pytest.raises(dataclasses.FrozenInstanceError):
        builtin[0].reference = "def add(a, b): return 0"


def test_humaneval_is_split_into_tiered_single_tests():
    problems = humaneval_problems(limit=20)
    assert len(problems) == 20 and all(len(p.tests) >= 2 for p in problems)
    tiers = {t.tier for p in problems for t in p.tests}
    assert {"basic", "intermediate", "edge"} <= tiers
    kept, rejected = verify_references(problems)
    assert rejected == [] and len(kept) == 20
    # each split test is a single assertion about the entry point, with the candidate renamed
    first = problems[0].tests[0].code
    assert "candidate" not in first and problems[0].entry_point in first


def test_retier_moves_tests_by_measured_failure_rate(builtin):
    problem = builtin[0]
    rates = {
        (problem.problem_id, "basic_1"): (19, 20),
        (problem.problem_id, "edge_1"): (0, 20),
        (problem.problem_id, "edge_2"): (5, 5),
    }
    (moved,) = retier([problem], rates, min_runs=8)
    tiers = {t.test_id: t.tier for t in moved.tests}
    assert tiers["basic_1"] == "edge" and tiers["edge_1"] == "basic" and tiers["edge_2"] == "edge"  # too few runs: kept


def test_the_dynamic_schedules_alpha_is_a_source_the_rewards_read_and_the_curriculum_is_left_alone():
    from curriculab.planner.portfolio import LiveAllocation
    from curriculab.training.rewards import tarot_score

    forward, live = TierCurriculum("forward", "uniform"), LiveAllocation()
    rates = {"basic": 0.0, "intermediate": 0.0, "complex": 1.0, "edge": 1.0}
    assert tarot_score(rates, forward, 0.1, live) == 0.0  # not set yet: the schedule's basic tier alone
    live.alpha = {"basic": 0.0, "intermediate": 0.0, "complex": 1.0, "edge": 1.0}  # what the callback writes
    assert forward.active(0.1, live) == ("complex", "edge") and tarot_score(rates, forward, 0.1, live) == pytest.approx(
        1.0
    )
    assert (
        forward.active(0.1) == ("basic",) and tarot_score(rates, forward, 0.1) == 0.0
    )  # the plan's curriculum unchanged


def test_tarot_schedules_and_weights():
    forward = TierCurriculum("forward", "uniform")
    assert forward.active(0.1) == ("basic",) and forward.active(0.45) == ("basic", "intermediate", "complex")
    assert forward.active(0.9) == ("basic", "intermediate", "complex", "edge")
    assert TierCurriculum("reversed").active(0.25) == ("complex", "edge")
    assert TierCurriculum(weights="complex-edge").weights == {
        "basic": 0.15,
        "intermediate": 0.15,
        "complex": 0.35,
        "edge": 0.35,
    }
    alloc = forward.allocation(0.3)
    assert alloc == {"basic": 2.0, "intermediate": 2.0, "complex": 0.0, "edge": 0.0}  # Σ α w = 1 over the active tiers
    with pytest.raises(ValueError, match="schedule 'sideways' is unknown"):
        TierCurriculum("sideways")
    with pytest.raises(ValueError, match=r"unknown tier\(s\) \['expert'\]"):
        TierCurriculum(weights={"expert": 1.0})


def test_trl_reward_functions_follow_the_schedule_and_log_per_tier(builtin):
    tarot, avg, pass_all = make_reward_functions(builtin, TierCurriculum("forward", "basic-intermediate"))
    assert [f.__name__ for f in (tarot, avg, pass_all)] == ["tarot_reward", "avg_reward", "pass_all_reward"]
    edge_broken = "def reverse(s):\n    return s[::-1] if len(s) > 1 else None\n"
    completions = ["```python\n" + edge_broken + "```", "def reverse(s):\n    return s\n"]
    kwargs = {"problem_id": ["curriculab/reverse_string"] * 2}
    logged = {}
    early = tarot(
        ["p", "p"],
        completions,
        None,
        trainer_state=SimpleNamespace(global_step=1, max_steps=100),
        log_metric=lambda k, v: logged.__setitem__(k, v),
        **kwargs,
    )
    late = tarot(["p", "p"], completions, None, trainer_state=SimpleNamespace(global_step=90, max_steps=100), **kwargs)
    assert early[0] == 1.0 and late[0] == pytest.approx(1 - 0.15)  # edge counts only late, weighted 0.15
    assert logged["pass_rate/basic"] == pytest.approx(0.5) and logged["alpha/edge"] == 0.0
    assert avg(None, completions, None, **kwargs)[0] == pytest.approx(6 / 8)
    assert pass_all(None, completions, None, **kwargs) == [0.0, 0.0]
    conversational = [[{"role": "assistant", "content": "def reverse(s):\n    return s[::-1]\n"}]]
    assert pass_all(None, conversational, None, problem_id=["curriculab/reverse_string"]) == [1.0]


def test_reward_functions_pickle_and_score_the_same_after(builtin):
    # TRL's own rewards are picklable callables: a reward goes to another process (a launcher, a
    # spawned worker) and scores as it did here, the shared sandbox cache and live allocation with it
    import pickle

    from curriculab.planner.portfolio import LiveAllocation

    live = LiveAllocation()
    functions = make_reward_functions(
        builtin,
        TierCurriculum("forward", "basic-intermediate"),
        live=live,
        names=("tarot_reward", "avg_reward", "pass_all_reward", "format_reward"),
    )
    copies = pickle.loads(pickle.dumps(functions))
    assert [f.__name__ for f in copies] == ["tarot_reward", "avg_reward", "pass_all_reward", "format_reward"]
    assert copies[0].context is copies[1].context  # one context (one sandbox cache) per run, still
    completions = [
        "```python\ndef reverse(s):\n    return s[::-1] if len(s) > 1 else None\n```",
        "def reverse(s):\n    return s\n",
    ]
    kwargs = {
        "problem_id": ["curriculab/reverse_string"] * 2,
        "trainer_state": SimpleNamespace(global_step=90, max_steps=100),
    }
    assert [f(None, completions, None, **kwargs) for f in copies] == [
        f(None, completions, None, **kwargs) for f in functions
    ]
    copies[0].context.live.alpha = {
        "basic": 1.0,
        "intermediate": 0.0,
        "complex": 0.0,
        "edge": 0.0,
    }  # the callback's write
    assert copies[0](None, completions, None, **kwargs) == [1.0, 0.0]  # the copy reads its own live allocation


def test_sandbox_faults_give_none_not_zero(builtin):
    tarot, _, _ = make_reward_functions(builtin, limits=Limits(processes=1))  # bwrap cannot even start
    assert tarot(None, [builtin[0].reference], None, problem_id=[builtin[0].problem_id]) == [None]


def test_reward_cli_prints_the_pinned_json(tmp_path, builtin):
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {
                    "problem_id": "curriculab/add_two",
                    "completion_id": "ok",
                    "completion": "```python\ndef add(a, b):\n    return a + b\n```",
                },
                {
                    "problem_id": "curriculab/add_two",
                    "completion_id": "loop",
                    "completion": "def add(a, b):\n    while True:\n        pass\n",
                },
                {
                    "problem_id": "curriculab/add_two",
                    "completion_id": "exit",
                    "completion": "import sys\nsys.exit(0)\n",
                },
            ]
        )
        + "\n{broken\n"
    )
    problems = save_problems(builtin[:1], tmp_path / "p.jsonl")
    result = CliRunner().invoke(
        cli,
        [
            "reward",
            "--problems",
            str(problems),
            "--completions",
            str(completions),
            "--weights",
            "basic=0.35,intermediate=0.35,complex=0.15,edge=0.15",
            "--test-timeout",
            "0.5",
            "--json",
        ],
    )
    assert result.exit_code == 1  # the broken line is refused; the rest are scored
    assert (
        result.stderr.strip()
        == f"refused: {completions}: line 4: invalid JSON (Expecting property name enclosed in double quotes). Fix the line"
    )
    rows = json.loads(result.stdout)
    assert [(r["completion_id"], r["reward"], r["status"]) for r in rows] == [
        ("ok", 1.0, "ok"),
        ("loop", 0.0, "timeout"),
        ("exit", 0.0, "load_error"),
    ]
    assert set(rows[0]) >= {"completion_id", "problem_id", "reward", "pass_rate", "status"}
    assert rows[0]["pass_rate"] == {"basic": 1.0, "intermediate": 1.0, "complex": 1.0, "edge": 1.0}
    bad = CliRunner().invoke(
        cli, ["reward", "--problems", str(problems), "--completions", str(completions), "--weights", "basic=lots"]
    )
    assert bad.exit_code == 1 and "is not tier=number" in bad.stderr


@pytest.mark.slow
def test_hostile_tests_in_a_problems_file_cannot_break_the_reward_command(tmp_path):
    # the tests print over the JSON, end their process, and loop: they run in the sandboxed judge,
    # so `reward` still prints one row per completion and its own output only
    tests = [
        {"test_id": "prints", "tier": "basic", "code": "print('[not json')\nassert add(1, 2) == 3"},
        {"test_id": "exits", "tier": "intermediate", "code": "import os\nos._exit(0)"},
        {"test_id": "loops", "tier": "complex", "code": "while True:\n    pass"},
    ]
    problem = {
        "problem_id": "p/add",
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "reference": "def add(a, b):\n    return a + b\n",
        "tests": tests,
    }
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps(problem) + "\n")
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "".join(
            json.dumps(
                {"problem_id": "p/add", "completion_id": f"c{i}", "completion": "def add(a, b):\n    return a + b\n"}
            )
            + "\n"
            for i in range(3)
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "curriculab.cli",
            "reward",
            "--problems",
            str(problems),
            "--completions",
            str(completions),
            "--test-timeout",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["completion_id"] for r in rows] == ["c0", "c1", "c2"]
    assert all(r["pass_rate"]["basic"] == 1.0 and r["pass_rate"]["intermediate"] == 0.0 for r in rows)


def test_without_a_sandbox_the_status_says_unsandboxed_and_verdicts_still_hold():
    from curriculab.training.sandbox import run_tests

    good = run_tests("def add(a, b):\n    return a + b\n", "add", [("t", "assert add(1, 2) == 3")], backend="rlimits")
    wrong = run_tests("def add(a, b):\n    return 0\n", "add", [("t", "assert add(1, 2) == 3")], backend="rlimits")
    assert (good.status, good.backend, good.outcomes[0].passed) == ("unsandboxed", "rlimits", True)
    assert (wrong.status, wrong.outcomes[0].passed) == ("unsandboxed", False)


def test_without_a_sandbox_the_completion_still_cannot_see_the_harness_command_line():
    from curriculab.training.sandbox import run_tests

    code = (
        "import os\ndef add(a, b):\n    seen = []\n    for pid in os.listdir('/proc'):\n"
        "        try:\n            seen.append(open(f'/proc/{pid}/cmdline', 'rb').read())\n        except OSError:\n            pass\n"
        "    return [c for c in seen if b'pytest' in c]\n"
    )
    result = run_tests(code, "add", [("t", "assert add(1, 2) == []")], backend="rlimits")
    assert result.status == "unsandboxed" and "own pid, IPC, mount and network namespaces" in result.isolation
    assert result.outcomes[0].passed, result.outcomes[0].detail


@pytest.mark.parametrize("field", ["test_timeout_s", "cpu_s", "memory_bytes", "processes", "max_code_bytes"])
def test_sandbox_limits_refuse_non_positive_values(field):
    with pytest.raises(ValueError, match=f"Limits.{field} is 0; it must be positive"):
        Limits(**{field: 0})


def test_the_completion_budget_defaults_to_twice_the_test_timeout_and_refuses_nonsense():
    assert Limits(test_timeout_s=3.0).budget_s == 6.0 and Limits(completion_timeout_s=4.5).budget_s == 4.5
    with pytest.raises(
        ValueError,
        match=r"^Limits.completion_timeout_s is -1; it must be positive \(or None for twice "
        r"test_timeout_s\)$",
    ):
        Limits(completion_timeout_s=-1)


def test_without_a_sandbox_rewards_are_refused_unless_asked_for(monkeypatch, tmp_path):
    import warnings

    from curriculab.training import rewards

    monkeypatch.setattr(rewards, "detect_backend", lambda: "rlimits")
    monkeypatch.setattr(rewards, "unsandboxed_backend", lambda: "rlimits")  # not root, or no unshare
    problems = builtin_problems()[:1]
    with pytest.raises(ValueError, match=r"^no sandbox works here \(bubblewrap is missing or cannot start\)"):
        rewards.make_reward_functions(problems)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rewards.Scorer({p.problem_id: p for p in problems}, allow_unsandboxed=True)
    assert any("scoring WITHOUT a sandbox" in str(w.message) for w in caught)
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        json.dumps({"problem_id": problems[0].problem_id, "completion_id": "c", "completion": problems[0].reference})
        + "\n"
    )
    refused = CliRunner().invoke(cli, ["reward", "--problems", "builtin", "--completions", str(completions)])
    assert refused.exit_code == 1 and "accept the risk explicitly" in refused.stderr
