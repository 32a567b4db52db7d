"""Problems from the shapes public code-RL sets are published in, into curriculab's format.

- LiveCodeBench (`code_generation_lite`): `question_id`, `question_title`, `question_content`,
  `platform`, `starter_code`, `difficulty`, `public_test_cases` / `private_test_cases` (JSON text:
  `[{"input", "output", "testtype": "functional"|"stdin"}]`; a functional input is one JSON value
  per line, the method's arguments; the published private cases are that text pickled, zlib-compressed
  and base64-encoded, read here by an unpickler that builds plain values only), `metadata` (JSON text with `func_name`). Functional problems
  are LeetCode's: the entry point is `Solution`, each test `assert Solution().f(*args) == expected`.
- APPS: `problem_id`, `question`, `solutions` (JSON text: a list of programs), `input_output` (JSON
  text: `{"inputs": [...], "outputs": [...]}`, with `fn_name` for call-based problems),
  `difficulty` (introductory|interview|competition), `starter_code`.
- CodeContests: `name`, `description`, `public_tests` / `private_tests` / `generated_tests`
  (`{"input": [...], "output": [...]}`), `solutions` (`{"language": [...], "solution": [...]}`,
  language 3 is Python 3), `difficulty`, `cf_rating`.

Public tests become the basic tier, private ones intermediate, generated ones complex. LeetCode's
`ListNode` and `TreeNode` are in every functional problem's prelude. A set that ships no solutions
(LiveCodeBench) takes one from `reference` on the record, or the problem is left out.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curriculab.training.problems import InvalidField, Problem, ProblemError, ProblemTest
from curriculab.trajectory.vocabulary import Tier

LEETCODE_PRELUDE = """from typing import *
from collections import *
import heapq, bisect, math, itertools, functools


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right
"""
"""What LeetCode's Python judge puts before a solution: its typing and collections names and the
two node classes its signatures use (both sides of the sandbox define them)."""

PYTHON3 = 3
"""CodeContests' language code for Python 3."""

_TIERS: dict[str, Tier] = {"public": "basic", "private": "intermediate", "generated": "complex"}


def _json(value: Any, field: str) -> Any:
    if isinstance(value, (list, dict)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        raise InvalidField(field, "Input should be JSON text") from None


class _TextOnly(pickle.Unpickler):
    """An unpickler that builds plain values only: any class or function a pickle names is refused,
    so a hostile dataset cannot run code by being read."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the pickle names {module}.{name}; only plain values are read")


def _lcb_cases(value: Any, field: str) -> Any:
    """LiveCodeBench's test cases: JSON text, or (the published `private_test_cases` since release
    v2) JSON text pickled, zlib-compressed and base64-encoded."""
    if not isinstance(value, str) or value.lstrip().startswith(("[", "{")):
        return _json(value, field)
    try:
        text = _TextOnly(io.BytesIO(zlib.decompress(base64.b64decode(value.encode("ascii"))))).load()
    except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as exc:
        raise InvalidField(
            field, f"Input should be JSON text, or base64 of zlib of a pickled JSON string ({exc})"
        ) from None
    if not isinstance(text, str):
        raise InvalidField(field, f"the encoded cases hold a {type(text).__name__}, not JSON text")
    return _json(text, field)


def _stdio_tests(groups: Iterable[tuple[str, list[str], list[str]]]) -> list[ProblemTest]:
    tests = []
    for group, inputs, outputs in groups:
        if len(inputs) != len(outputs):
            raise InvalidField(f"{group}_tests", f"{len(inputs)} inputs but {len(outputs)} outputs")
        tests += [
            ProblemTest(test_id=f"{group}_{k}", tier=_TIERS[group], stdin=str(i), stdout=str(o))
            for k, (i, o) in enumerate(zip(inputs, outputs), start=1)
        ]
    return tests


def from_livecodebench(record: dict[str, Any]) -> Problem:
    """A LiveCodeBench record (its `reference` key holds a solution: the set ships none)."""
    metadata = _json(record.get("metadata") or "{}", "metadata")
    groups = [
        ("public", _json(record.get("public_test_cases") or "[]", "public_test_cases")),
        ("private", _lcb_cases(record.get("private_test_cases") or "[]", "private_test_cases")),
    ]
    tests = []
    for group, cases in groups:
        for k, case in enumerate(cases, start=1):
            if case.get("testtype") == "functional":
                name = metadata.get("func_name")
                if not name:
                    raise InvalidField("metadata.func_name", "Field required for functional tests")
                args = ", ".join(repr(json.loads(line)) for line in str(case["input"]).splitlines() if line.strip())
                expected = repr(json.loads(case["output"]))
                code = f"assert Solution().{name}({args}) == {expected}"
                tests.append(ProblemTest(test_id=f"{group}_{k}", tier=_TIERS[group], code=code))
            else:
                tests.append(
                    ProblemTest(test_id=f"{group}_{k}", tier=_TIERS[group], stdin=case["input"], stdout=case["output"])
                )
    functional = any(t.code for t in tests)
    return Problem(
        problem_id=f"livecodebench/{record['question_id']}",
        prompt=str(record["question_content"])
        + ("\n\n" + record["starter_code"] if record.get("starter_code") else ""),
        entry_point="Solution" if functional else "",
        reference=str(record.get("reference", "")),
        tests=tests,
        source=f"livecodebench:{record.get('platform', '')}",
        prelude=LEETCODE_PRELUDE if functional else "",
    )


def from_apps(record: dict[str, Any]) -> Problem:
    """An APPS record: its first solution is the reference."""
    io = _json(record.get("input_output") or "{}", "input_output")
    solutions = _json(record.get("solutions") or "[]", "solutions")
    if not solutions:
        raise InvalidField("solutions", "no solution to use as the reference")
    if io.get("fn_name"):
        raise InvalidField(
            "input_output.fn_name", "call-based APPS problems are not read (write them as LeetCode-style tests)"
        )
    return Problem(
        problem_id=f"apps/{record['problem_id']}",
        prompt=str(record["question"]),
        entry_point="",
        reference=solutions[0],
        tests=_stdio_tests([("public", io.get("inputs", []), io.get("outputs", []))]),
        source=f"apps:{record.get('difficulty', '')}",
    )


def from_codecontests(record: dict[str, Any]) -> Problem:
    """A CodeContests record: its first Python 3 solution is the reference."""
    solutions = record.get("solutions") or {}
    python = [s for lang, s in zip(solutions.get("language", []), solutions.get("solution", [])) if lang == PYTHON3]
    if not python:
        raise InvalidField("solutions", "no Python 3 solution to use as the reference")
    groups = [
        (
            group,
            (record.get(f"{group}_tests") or {}).get("input", []),
            (record.get(f"{group}_tests") or {}).get("output", []),
        )
        for group in ("public", "private", "generated")
    ]
    return Problem(
        problem_id=f"codecontests/{record['name']}",
        prompt=str(record["description"]),
        entry_point="",
        reference=python[0],
        tests=_stdio_tests(groups),
        source=f"codecontests:{record.get('difficulty', '')}",
    )


READERS = {"livecodebench": from_livecodebench, "apps": from_apps, "codecontests": from_codecontests}


def read_problem_set(path: str | Path, shape: str, errors: list[str] | None = None) -> list[Problem]:
    """Every record of a JSONL file in one of the READERS' shapes. A bad record raises with its
    line and field, or, given an `errors` list, is said there and the rest are still read."""
    if shape not in READERS:
        raise ProblemError(f"unknown problem set shape {shape!r}. Use one of: {', '.join(READERS)}")
    problems = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                problems.append(READERS[shape](json.loads(line)))
            except (InvalidField, KeyError, ValueError) as exc:
                error = ProblemError(f"{path}: line {number}: {exc}. Fix the record")
                if errors is None:
                    raise error from None
                errors.append(str(error))
    return problems
