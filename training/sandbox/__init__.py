"""Sandboxed test execution: the completion runs in one locked-down sandbox, its tests in another
(the judge); the harness only collects verdicts."""

from curriculab.training.sandbox.runner import (
    Limits,
    RunResult,
    TestOutcome,
    detect_backend,
    prestart,
    run_many,
    run_tests,
    unsandboxed_backend,
)

__all__ = [
    "Limits",
    "RunResult",
    "TestOutcome",
    "detect_backend",
    "prestart",
    "run_many",
    "run_tests",
    "unsandboxed_backend",
]
