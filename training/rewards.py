"""Tier-weighted rewards, as TAROT defines them, as plain TRL reward callables.

R = Σ_l α_l · w_l · pass_rate_l over tiers l ∈ {basic, intermediate, complex, edge}: α is the
allocation (which tiers are practised at this point of training, from the schedule and
`trainer_state`), w the weight (what a pass on a tier is worth). Active tiers share α so that
a completion passing every active test scores 1. Baselines: `avg_reward` (mean pass rate over
all tests) and `pass_all_reward` (1 only if every test passes). A sandbox fault is not a wrong
answer: those completions get None, which TRL treats as "not applicable".
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from curriculab.planner.portfolio import TierCurriculum
from curriculab.training.problems import TIERS, Problem, extract_code
from curriculab.training.sandbox import Limits, RunResult, detect_backend, run_many

SANDBOX_FAULTS = ("sandbox_error",)
"""Statuses that say nothing about the completion: its reward is None."""


def pass_rates(problem: Problem, result: RunResult) -> dict[str, float | None]:
    """Per tier, the share of its tests that passed (None for a tier without tests)."""
    tier_of = {t.test_id: t.tier for t in problem.tests}
    rates: dict[str, float | None] = {}
    for tier in TIERS:
        outcomes = [o for o in result.outcomes if tier_of.get(o.test_id) == tier]
        rates[tier] = sum(o.passed for o in outcomes) / len(outcomes) if outcomes else None
    return rates


def tarot_score(rates: dict[str, float | None], curriculum: TierCurriculum, progress: float = 1.0) -> float:
    """Σ α_l w_l pass_rate_l over active tiers that have tests (α renormalised over those)."""
    alpha = curriculum.allocation(progress, tuple(t for t, r in rates.items() if r is not None))
    return sum(alpha[t] * curriculum.weights.get(t, 0.0) * rates[t] for t in alpha if alpha[t] and rates.get(t) is not None)


def avg_score(result: RunResult) -> float:
    return sum(o.passed for o in result.outcomes) / len(result.outcomes) if result.outcomes else 0.0


def pass_all_score(result: RunResult) -> float:
    return float(bool(result.outcomes) and all(o.passed for o in result.outcomes))


def _text(completion: Any) -> str:
    """TRL passes plain strings, or message lists for conversational datasets."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


@dataclass
class Scorer:
    """Runs completions against their problems' tests, caching results so several reward
    functions over the same batch run the sandbox once."""

    problems: dict[str, Problem]
    """Problems by id."""
    limits: Limits = field(default_factory=Limits)
    """Sandbox limits."""
    workers: int | None = None
    """Parallel sandboxes (default: a few per core)."""
    cache_size: int = 4096
    """Results kept for reuse."""
    allow_unsandboxed: bool = False
    """Score even where no sandbox works (rlimits only): model code could then read the answer key."""
    _cache: OrderedDict = field(default_factory=OrderedDict, repr=False)

    def __post_init__(self) -> None:
        if detect_backend() == "rlimits":
            if not self.allow_unsandboxed:
                raise ValueError(
                    "no sandbox works here (bubblewrap is missing or cannot start), so model code would run under rlimits "
                    "only and could read the tests and the answer key. Install bubblewrap (apt-get install bubblewrap), "
                    "or accept the risk explicitly (allow_unsandboxed=True; `--allow-unsandboxed` on the command line)")
            warnings.warn("scoring WITHOUT a sandbox (rlimits only): rewards can be gamed; results are marked `unsandboxed`",
                          stacklevel=3)

    def run(self, problem_ids: Sequence[str], texts: Sequence[str]) -> list[RunResult]:
        keys = list(zip(problem_ids, texts))
        missing = [k for k in dict.fromkeys(keys) if k not in self._cache]
        for pid, _ in missing:
            if pid not in self.problems:
                raise KeyError(f"problem_id {pid!r} is not in the problem set. Pass the problems file the completions were made for")
        jobs = [(extract_code(text), self.problems[pid].entry_point,
                 [(t.test_id, t.code) for t in self.problems[pid].tests]) for pid, text in missing]
        for key, result in zip(missing, run_many(jobs, self.limits, self.workers)):
            self._cache[key] = result
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return [self._cache[k] for k in keys]


def make_reward_functions(problems: Sequence[Problem], curriculum: TierCurriculum | None = None,
                          limits: Limits | None = None, workers: int | None = None,
                          allow_unsandboxed: bool = False, on_scored: Callable[..., None] | None = None,
                          ) -> list[Callable[..., list[float | None]]]:
    """`[tarot_reward, avg_reward, pass_all_reward]` for `GRPOTrainer(reward_funcs=...)`.

    Each takes TRL's `(prompts, completions, completion_ids, **kwargs)` and reads the dataset's
    `problem_id` column and TRL's `trainer_state` and `log_metric` from kwargs. `on_scored`, when
    given, is called once per batch by `tarot_reward` with `(trainer_state, prompts, completions,
    problem_ids, results, rewards)`: the rollouts with their per-test outcomes.
    """
    curriculum = curriculum or TierCurriculum()
    scorer = Scorer({p.problem_id: p for p in problems}, limits or Limits(), workers, allow_unsandboxed=allow_unsandboxed)

    def _results(completions, problem_id):
        return scorer.run(list(problem_id), [_text(c) for c in completions])

    def tarot_reward(prompts=None, completions=(), completion_ids=None, *, problem_id, trainer_state=None,
                     log_metric=None, **kwargs) -> list[float | None]:
        progress = 1.0
        if trainer_state is not None and getattr(trainer_state, "max_steps", 0):
            progress = trainer_state.global_step / trainer_state.max_steps
        results = _results(completions, problem_id)
        rewards: list[float | None] = []
        tier_totals: dict[str, list[float]] = {t: [] for t in TIERS}
        for pid, result in zip(problem_id, results):
            if result.status in SANDBOX_FAULTS:
                rewards.append(None)
                continue
            rates = pass_rates(scorer.problems[pid], result)
            for tier, rate in rates.items():
                if rate is not None:
                    tier_totals[tier].append(rate)
            rewards.append(tarot_score(rates, curriculum, progress))
        if on_scored is not None:
            on_scored(trainer_state, list(prompts or [None] * len(completions)), [_text(c) for c in completions],
                      list(problem_id), results, rewards)
        if log_metric is not None:
            for tier, values in tier_totals.items():
                if values:
                    log_metric(f"pass_rate/{tier}", sum(values) / len(values))
            for tier, alpha in curriculum.allocation(progress).items():
                log_metric(f"alpha/{tier}", alpha)
        return rewards

    def avg_reward(prompts=None, completions=(), completion_ids=None, *, problem_id, **kwargs) -> list[float | None]:
        return [None if r.status in SANDBOX_FAULTS else avg_score(r) for r in _results(completions, problem_id)]

    def pass_all_reward(prompts=None, completions=(), completion_ids=None, *, problem_id, **kwargs) -> list[float | None]:
        return [None if r.status in SANDBOX_FAULTS else pass_all_score(r) for r in _results(completions, problem_id)]

    return [tarot_reward, avg_reward, pass_all_reward]


def score_completions(problems: Sequence[Problem], completions: Sequence[dict[str, Any]],
                      curriculum: TierCurriculum | None = None, limits: Limits | None = None,
                      workers: int | None = None, allow_unsandboxed: bool = False) -> list[dict[str, Any]]:
    """`curriculab reward`: one `{completion_id, problem_id, reward, pass_rate: {tier: x}, status}` per completion."""
    curriculum = curriculum or TierCurriculum()
    scorer = Scorer({p.problem_id: p for p in problems}, limits or Limits(), workers, allow_unsandboxed=allow_unsandboxed)
    results = scorer.run([c["problem_id"] for c in completions], [c["completion"] for c in completions])
    out = []
    for completion, result in zip(completions, results):
        problem = scorer.problems[completion["problem_id"]]
        rates = pass_rates(problem, result)
        reward = None if result.status in SANDBOX_FAULTS else tarot_score(rates, curriculum)
        out.append({"completion_id": completion["completion_id"], "problem_id": completion["problem_id"], "reward": reward,
                    "pass_rate": rates, "status": result.status,
                    "failed_tests": [f"{o.test_id}: {o.status}" for o in result.outcomes if not o.passed][:10]})
    return out
