"""Rewards for terminal episodes: plain callables TRL calls with `environments=` (instances of
`TerminalEnvironment`), one float per rollout, None where the environment itself failed
(`EpisodeResult.failure`: the harness's fault; TRL leaves a None out of the rollout's sum).

- `milestone_reward`: the share of the task's milestones the verifier passed (a multi-step task's
  `multi_step_reward_strategy` respected: `final` counts the last step's milestones only).
- `pass_reward`: 1 when every milestone passed, else 0.
- `verification_reward`: the process rubric for `skipped_verification`, paid only for tests that
  ran. 1 when the agent changed something, its shell's record shows a system test runner after its
  last change (pytest, `python3 -m unittest`/`pytest`/`doctest`, `make test`, `npm test`, `cargo
  test`, `go test`, tox, nox; `true || pytest` runs none), AND the harness, replaying that check on
  the judge's copy of the agent's files in the sandbox its programs run in (`CheckRun`: a clean
  shell, the system's PATH, no function, alias or shim of the agent's, `python3 -m` importing the
  system's runner before the workdir), saw it report tests run,
  passing or failing. No check: a script or program of the agent's (`python3 stats.py`, `bash
  run_tests.sh`, a link to `/bin/true`), pytest exiting 5, unittest's `Ran 0 tests`, a missing
  module, make's `No rule to make target`. The shell's record says which check to replay; it never
  pays by itself (its statuses and output are the agent's to forge).
  Bound: the term is 0 or 1, and a gamed run (a forged record naming a runner, or a real runner
  over a trivial test the agent wrote — the residue no replay can tell from honest work) earns the
  same 1 an honest failing attempt that checks its work earns, while its outcome rewards are 0:
  gaming never pays more than an honest failing attempt.
"""

from __future__ import annotations

from typing import Any

from curriculab.taxonomy.coders.environment import verified_after_last_edit


def _results(environments: list[Any]) -> list[Any]:
    """Each episode's result, or None where the environment failed (not the agent's doing)."""
    out = []
    for environment in environments:
        try:
            result = environment.result
        except RuntimeError:  # no episode was started (`result` says so); any other error is a bug to see
            result = None
        out.append(None if result is None or result.failure is not None else result)
    return out


def milestone_share(result: Any) -> float:
    """The share of milestones passed, each clamped to [0, 1] (`final`: the last step's only)."""
    steps = result.steps
    if len(steps) > 1 and result.strategy == "final":
        values = list(steps[-1].milestones.values())
    else:
        values = list(result.milestones.values())
    return sum(min(max(v, 0.0), 1.0) for v in values) / len(values) if values else 0.0


def milestone_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """The share of milestones passed, per rollout."""
    return [None if r is None else milestone_share(r) for r in _results(environments)]


def pass_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """1 when every milestone passed, else 0, per rollout."""
    return [None if r is None else float(milestone_share(r) == 1.0) for r in _results(environments)]


def verification_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """1 when tests ran after the agent's last change (module docstring: the exact rule)."""
    return [
        None
        if result is None
        else 0.0
        if result.forfeited
        else float(result.tests_ran and verified_after_last_edit(result.commands))
        for result in _results(environments)
    ]
