"""Rewards for terminal episodes: plain callables TRL calls with `environments=` (instances of
`TerminalEnvironment`), one float per rollout, None where the environment itself failed
(`EpisodeResult.failure`: the harness's fault; TRL leaves a None out of the rollout's sum).

- `milestone_reward`: the share of the task's milestones the verifier passed (a multi-step task's
  `multi_step_reward_strategy` respected: `final` counts the last step's milestones only).
- `pass_reward`: 1 when every milestone passed, else 0.
- `verification_reward`: the process rubric for `skipped_verification` (taxonomy v5). 1 when the
  agent changed something and, after its last change, the shell executed a check (the episode's
  record of executed commands: `true || pytest` runs no check; a command whose record was tampered
  with credits none): a test runner (pytest, `python3 -m
  unittest`, `make test`, `npm test`, `cargo test`, `go test`, tox, nox), a script whose name
  says test (`bash run_tests.sh`), or what it changed itself (`python3 stats.py`, `./bin/greet.sh`,
  `python3 -c "import stats; …"`). Changes are what the environment saw on disk after each
  command (caches such as `__pycache__` and `.pytest_cache` are not changes); within one command,
  parts run in order (`sed -i … && pytest` checks after its edit, `pytest; sed -i …` does not).
  Not a check: a word that is not a command (`echo pytest`, a comment), `--help`/`--version`/
  `--collect-only`, a command the shell could not find or run (exit 126 or 127).
  How it could still be gamed: a script the agent wrote itself and ran counts as running what it
  changed, even if it checks nothing; the outcome rewards, not this one, pay for a working result.
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
    """1 when the agent ran a check after its last change (module docstring: the exact rule)."""
    return [
        None if result is None else 0.0 if result.forfeited else float(verified_after_last_edit(result.commands))
        for result in _results(environments)
    ]
