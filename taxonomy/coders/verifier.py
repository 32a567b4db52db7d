"""Verifier-derived failure codes (taxonomy v3): decided from how each test ended and from the
completion's text, not from behaviour, so they are exact by construction.

Two families:

- **completion codes**, for single-turn code completions (GRPO rollouts): why the completion
  failed — no code at all, a code block that cannot be extracted (unbalanced fences, prose in
  the code), truncated at the length limit, a syntax error, the entry point missing or not
  callable as the tests call it, an undefined name, a runtime exception, a timeout, or a wrong
  answer split by the failing tier profile (basic tests fail too; only harder tiers fail). The
  set was chosen by reading real SmolLM2-135M-Instruct completions
  (`tests/fixtures/rollouts/`), where an unextractable block is the commonest failure.
- **trial codes**, for agent trials that carry per-test results (Terminal-Bench
  `parser_results`, Harbor `verifier/ctrf.json`): every test fails, some pass, a near miss (at
  least half pass), a test timeout.

The sandbox's judge writes each failed test's detail in a fixed form that these rules read:
`raised <Type>: ...` (the completion's own exception), `wrong signature: TypeError: ...` (the
call could not bind the test's arguments), `missing entry point: ...`; a load failure is status
`load_error` with `<Type>: ...`; any other failure is the test's own verdict on the returned
value (a wrong answer).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from curriculab.taxonomy.completion import extract_code, has_code_block
from curriculab.taxonomy.versions import NEWEST

CODER = "verifier"
"""The coder name in `failure_codes` and `coding_status`."""
TAXONOMY_VERSION = NEWEST
"""The first taxonomy with verifier-derived codes."""

COMPLETION_CODES: tuple[str, ...] = (
    "no_code",
    "broken_code_block",
    "truncated",
    "syntax_error",
    "entry_point_mismatch",
    "undefined_name",
    "runtime_error",
    "timeout",
    "wrong_answer_basic",
    "wrong_answer_beyond_basic",
)
"""Codes about single-turn completions, in the taxonomy's order."""
TRIAL_CODES: tuple[str, ...] = ("all_tests_fail", "partial_pass", "near_miss", "test_timeout")
"""Codes about agent trials with per-test results."""

FENCE = "```"
_CODE_LINE = re.compile(
    r"^\s*(def |class |async def |import |from \S+ import|return\b|@\w|[A-Za-z_][\w.\[\]]*\s*[-+*/]?=[^=])", re.M
)
_CODE_PUNCTUATION = re.compile(r"[=(){}\[\]<>]")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z']*[,.:;!?]?")
_SYNTAX_LINE = re.compile(r"\(solution\.py, line (\d+)\)")
_NAME_ERRORS = ("NameError", "ImportError", "ModuleNotFoundError")
_SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
_RESOURCE_STATUSES = ("crashed", "memory", "output_limit")


@dataclass(frozen=True)
class TestEvidence:
    """One test's verdict as the store keeps it."""

    __test__ = False

    test_id: str
    """The test."""
    tier: str | None
    """basic, intermediate, complex, edge, or None."""
    passed: bool
    """Whether it passed."""
    status: str | None = None
    """How it ended (the sandbox's ok, failed, timeout, crashed, memory, output_limit, load_error; or the source's)."""
    detail: str | None = None
    """The verifier's message."""


@dataclass
class Finding:
    """One code for one trajectory: present or absent, with why and which tests show it."""

    code: str
    """The v3 code."""
    present: bool
    """Whether the trajectory has it."""
    rationale: str = ""
    """One line: the figure or message that decided it."""
    tests: list[str] = field(default_factory=list)
    """Failing tests that show it (at most 5)."""


def _type_of(detail: str) -> str:
    """`SyntaxError` from `SyntaxError: ...`, `IndexError` from `raised IndexError: ...`."""
    head = detail.removeprefix("raised ").removeprefix("wrong signature: ")
    return head.split(":", 1)[0].strip()


def is_prose_line(line: str, anywhere: bool = False) -> bool:
    """A sentence, not code. Strictly (the default): it starts a line with a capitalised word, has
    no code punctuation, and is four words or more, or two or more ending in ':' or '.' ("Example
    usage:"). With `anywhere` (for the line a SyntaxError points at, which cannot be a string's
    inside): indented or lower-case too, four words or more, at least 80% of them plain words."""
    line = _INLINE_CODE.sub("x", line)  # `print()` inside a sentence is still a sentence
    words = line.split()
    if (
        line[:1].isupper()
        and not _CODE_PUNCTUATION.search(line)
        and (len(words) >= 4 or (len(words) >= 2 and line.rstrip().endswith((":", "."))))
    ):
        return True
    plain = sum(bool(_PLAIN_WORD.fullmatch(w)) for w in words)
    return anywhere and len(words) >= 4 and plain >= 0.8 * len(words) and not line.lstrip().startswith("#")


def has_code(text: str) -> bool:
    """Whether the answer offers any code: a code fence, or a line that defines, imports, assigns
    or returns. Prose, an empty answer or a bare `True` offers none."""
    return FENCE in text or bool(_CODE_LINE.search(text.replace("`", "")))  # `x = 1` in backticks is code too


def ran_code_broken(text: str, entry_point: str | None = None, syntax_detail: str | None = None) -> bool:
    """What ran is not code alone: fences are there but no closed block was found, or the line a
    SyntaxError points at is prose (or, without a line number, the code has a prose line)."""
    ran = extract_code(text, entry_point)
    if FENCE in text and not has_code_block(text):
        return True
    where = _SYNTAX_LINE.search(syntax_detail or "")
    lines = ran.split("\n")
    if where and 1 <= int(where.group(1)) <= len(lines):
        return is_prose_line(lines[int(where.group(1)) - 1], anywhere=True)
    return any(is_prose_line(line) for line in lines)


def code_completion(
    text: str, tests: Sequence[TestEvidence], finish_reason: str | None = None, entry_point: str | None = None
) -> dict[str, Finding]:
    """Every completion code, present or absent, for one completion and its tests' verdicts.

    A completion that passed every test has none. `finish_reason` is `length` when generation
    hit the completion-length limit (TRL's rule: the last token is neither EOS nor padding);
    `entry_point` is the function the tests call."""
    found = {code: Finding(code, False) for code in COMPLETION_CODES}
    if tests and all(t.passed for t in tests):
        return found
    failed = [t for t in tests if not t.passed]

    def mark(code: str, rationale: str, hits: Sequence[TestEvidence] = ()) -> None:
        found[code] = Finding(code, True, rationale[:300], [t.test_id for t in hits][:5])

    if finish_reason == "length":
        mark("truncated", "generation stopped at the completion-length limit")
    if not has_code(text):
        mark("no_code", "no code at all: the answer is prose" if text.strip() else "an empty answer")
        return found  # nothing ran that could say more
    load = next((t for t in failed if t.status == "load_error"), None)
    kind = _type_of(load.detail or "") if load is not None else None
    syntax = load.detail or "" if kind in _SYNTAX_ERRORS else None
    details = [(t, t.detail or "") for t in failed if t.status not in ("load_error", "timeout")]
    missing = [t for t, d in details if d.startswith("missing entry point")]
    defined_somewhere = bool(entry_point) and bool(
        re.search(rf"\b(def\s+{re.escape(entry_point)}\s*\(|class\s+{re.escape(entry_point)}\b)", text)
    )
    fences = text.count(FENCE)
    on_prose = syntax is not None and ran_code_broken(text, entry_point, syntax)
    if fences % 2:
        mark("broken_code_block", f"{fences} code fences: one is never closed or never opened")
    elif on_prose:
        mark("broken_code_block", f"the code that runs fails to compile on a line of prose: {syntax}")
    elif missing and defined_somewhere:
        mark("broken_code_block", f"the answer defines {entry_point} outside any well-formed code block", missing)
    if load is not None:
        if kind in _SYNTAX_ERRORS:
            if not on_prose:  # else it fails on prose or a fence, not on its code
                mark("syntax_error", f"does not compile: {load.detail}", [load])
        elif kind in _NAME_ERRORS:
            mark("undefined_name", f"fails while loading: {load.detail}", [load])
        else:
            mark("runtime_error", f"raises while loading: {load.detail}", [load])
    timeouts = [t for t in failed if t.status == "timeout"]
    if timeouts:
        mark("timeout", f"{len(timeouts)} test(s) ran out of time (first: {timeouts[0].test_id})", timeouts)
    signature = [t for t, d in details if d.startswith("wrong signature")]
    if missing and not defined_somewhere:  # defined, but lost to a broken block: broken_code_block says so
        mark("entry_point_mismatch", missing[0].detail or "", missing)
    elif signature:
        mark("entry_point_mismatch", signature[0].detail or "", signature)
    raised = [(t, _type_of(d)) for t, d in details if d.startswith("raised ")]
    names = [t for t, kind in raised if kind in _NAME_ERRORS]
    if names:
        mark("undefined_name", names[0].detail or "", names)
    others = [(t, kind) for t, kind in raised if kind not in _NAME_ERRORS]
    resources = [t for t, _ in details if t.status in _RESOURCE_STATUSES]
    if others or resources:
        kinds = sorted({kind for _, kind in others} | {t.status for t in resources})
        mark(
            "runtime_error",
            f"raised {', '.join(kinds)} ({len(others) + len(resources)} test(s))",
            [t for t, _ in others] + resources,
        )
    wrong = [
        t
        for t, d in details
        if t.status not in _RESOURCE_STATUSES
        and not d.startswith(("raised ", "missing entry point", "wrong signature", "not run:"))
    ]
    if wrong:
        basic = [t for t in tests if t.tier in ("basic", None)]
        if basic and all(t.passed for t in basic):
            tiers = sorted({t.tier for t in wrong if t.tier})
            mark(
                "wrong_answer_beyond_basic",
                f"passes every basic test, wrong on {len(wrong)} {'/'.join(tiers)} test(s): {wrong[0].detail}",
                wrong,
            )
        else:
            mark(
                "wrong_answer_basic",
                f"wrong answer on {len(wrong)} test(s) while basic tests fail too: {wrong[0].detail}",
                wrong,
            )
    return found


def code_trial(
    tests: Sequence[TestEvidence], outcome: str | None, harness_error: str | None = None
) -> dict[str, Finding]:
    """Every trial code, present or absent, for an agent trial with per-test results."""
    found = {code: Finding(code, False) for code in TRIAL_CODES}
    if outcome != "failed":
        return found
    passed = sum(t.passed for t in tests)
    failed = [t for t in tests if not t.passed]
    if tests and not passed:
        found["all_tests_fail"] = Finding(
            "all_tests_fail", True, f"0 of {len(tests)} tests pass", [t.test_id for t in failed][:5]
        )
    elif failed and passed * 2 >= len(tests):
        found["near_miss"] = Finding(
            "near_miss", True, f"{passed} of {len(tests)} tests pass", [t.test_id for t in failed][:5]
        )
    elif failed:
        found["partial_pass"] = Finding(
            "partial_pass", True, f"{passed} of {len(tests)} tests pass", [t.test_id for t in failed][:5]
        )
    timeouts = [t for t in failed if t.status == "timeout"]
    if harness_error == "test_timeout" or timeouts:
        found["test_timeout"] = Finding(
            "test_timeout",
            True,
            "the verifier's tests ran out of time" + (f" ({len(timeouts)} test(s))" if timeouts else ""),
            [t.test_id for t in timeouts][:5],
        )
    return found
