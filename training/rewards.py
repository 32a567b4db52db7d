"""Tier-weighted rewards, as TAROT defines them, as plain TRL reward callables.

R = Σ_l α_l · w_l · pass_rate_l over tiers l ∈ {basic, intermediate, complex, edge}: α is the
allocation (which tiers are practised at this point of training, from the schedule and
`trainer_state`), w the weight (what a pass on a tier is worth). Active tiers share α so that
a completion passing every active test scores 1. Baselines: `avg_reward` (mean pass rate over
all tests) and `pass_all_reward` (1 only if every test passes). A sandbox fault is not a wrong
answer: those completions get None, which TRL treats as "not applicable". `format_reward` is the
term a plan adds when its verifier codes say the model's failures are about form (no code,
truncated, syntax errors, a missing entry point): it reads the text only and runs nothing.
"""

from __future__ import annotations

import ast
import json
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curriculab.planner.portfolio import LiveAllocation, TierCurriculum
from curriculab.taxonomy.completion import extract_code, has_code_block
from curriculab.training.problems import Problem
from curriculab.training.sampling import ProblemStats, gathered
from curriculab.training.sandbox import Limits, RunResult, detect_backend, run_many, unsandboxed_backend
from curriculab.trajectory.errors import InputError
from curriculab.trajectory.vocabulary import TIERS

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


def tarot_score(
    rates: dict[str, float | None],
    curriculum: TierCurriculum,
    progress: float = 1.0,
    live: LiveAllocation | None = None,
) -> float:
    """Σ α_l w_l pass_rate_l over active tiers that have tests (α renormalised over those)."""
    alpha = curriculum.allocation(progress, tuple(t for t, r in rates.items() if r is not None), live)
    weights = curriculum.tier_weights
    return sum(alpha[t] * weights.get(t, 0.0) * rate for t in alpha if alpha[t] and (rate := rates.get(t)) is not None)


def avg_score(result: RunResult) -> float:
    return sum(o.passed for o in result.outcomes) / len(result.outcomes) if result.outcomes else 0.0


def pass_all_score(result: RunResult) -> float:
    return float(bool(result.outcomes) and all(o.passed for o in result.outcomes))


FORMAT_REWARD = "format_reward"
"""The reward that reads a completion's form and runs nothing (`FormatReward`)."""

PassScore = Callable[[dict[str, "float | None"], RunResult, "RewardContext", float], float]
"""A pass reward's score of one sandboxed completion: (per-tier pass rates, the run's result, the
run's reward context, the schedule's progress) → reward."""

PASS_SCORES: dict[str, PassScore] = {
    "tarot_reward": lambda rates, result, context, progress: tarot_score(
        rates, context.curriculum, progress, context.live
    ),
    "avg_reward": lambda rates, result, context, progress: avg_score(result),
    "pass_all_reward": lambda rates, result, context, progress: pass_all_score(result),
}
"""The rewards that run a completion's tests, by name; `format_reward` runs nothing. With it, the
names `planner.portfolio.REWARD_FUNCTIONS` offers a plan (a test holds the two equal)."""


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
    """Score even where bubblewrap does not work: under the `namespaces` sandbox as root (weaker
    mounts), else under rlimits only, where model code could read the answer key."""
    backend: str = field(init=False, default="bwrap")
    """Where the completions run: bwrap, or without bubblewrap (when allowed) namespaces or rlimits."""
    _cache: OrderedDict[tuple[str, str], RunResult] = field(default_factory=OrderedDict, repr=False)

    def __post_init__(self) -> None:
        self.backend = detect_backend()
        if self.backend != "rlimits":
            return
        if not self.allow_unsandboxed:
            raise InputError(
                "no sandbox works here (bubblewrap is missing or cannot start), so model code would run under rlimits "
                "only and could read the tests and the answer key. Install bubblewrap (apt-get install bubblewrap), "
                "or accept the risk explicitly (allow_unsandboxed=True; `--allow-unsandboxed` on the command line): "
                "as root, completions then run under namespaces and chroot, else under rlimits only"
            )
        self.backend = unsandboxed_backend()
        if self.backend == "namespaces":
            warnings.warn(
                "scoring without bubblewrap: completions run under namespaces and chroot as their own uid (the same "
                "seccomp filter, no network, the problems file out of sight), with weaker mounts than bubblewrap's "
                "(no read-only submounts) and no namespaces of their own per completion",
                stacklevel=3,
            )
            return
        warnings.warn(
            "scoring WITHOUT a sandbox (rlimits only): model code runs as you, so your files (the problems file "
            "and its answer key included) are readable and writable by it, and where this host allows no user "
            "namespace, the network, your other processes and IPC are reachable too; rewards can be gamed. "
            "Results are marked `unsandboxed`",
            stacklevel=3,
        )

    def run(self, problem_ids: Sequence[str], texts: Sequence[str]) -> list[RunResult]:
        keys = list(zip(problem_ids, texts))
        missing = [k for k in dict.fromkeys(keys) if k not in self._cache]
        for pid, _ in missing:
            if pid not in self.problems:
                raise KeyError(
                    f"problem_id {pid!r} is not in the problem set. Pass the problems file the completions were made for"
                )
        jobs = [self.problems[pid].job(extract_code(text, self.problems[pid].entry_point)) for pid, text in missing]
        for key, result in zip(missing, run_many(jobs, self.limits, self.workers, backend=self.backend)):
            self._cache[key] = result
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return [self._cache[k] for k in keys]


FORMAT_PARTS = ("closed_block", "compiles", "defines_entry_point", "signature")
"""What `format_score` checks, a quarter each."""
_MAX_FORMAT_CHARS = 100_000


def _positional_arity(source: str, entry_point: str) -> int | None:
    """Positional parameters of `entry_point` defined at the top of `source` (None: not found)."""
    try:
        tree = ast.parse(source[:_MAX_FORMAT_CHARS])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return len(node.args.posonlyargs) + len(node.args.args)
    return None


def format_score(text: str, problem: Problem) -> float:
    """A format reward in [0, 1], as TRL's format rewards do, from the text alone (nothing is run):
    a quarter each for a closed ```python block, code that compiles, the entry point defined at
    the top level, and the reference's number of positional parameters."""
    closed = has_code_block(text)
    code = extract_code(text, problem.entry_point)[:_MAX_FORMAT_CHARS]
    try:
        compile(code, "solution.py", "exec", dont_inherit=True)
        compiles = True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        compiles = False
    arity = _positional_arity(code, problem.entry_point) if compiles else None
    expected = _positional_arity(problem.reference, problem.entry_point)
    return (closed + compiles + (arity is not None) + (arity is not None and arity == expected)) / len(FORMAT_PARTS)


@dataclass
class RewardContext:
    """What the pass rewards of one run share: the problems, the curriculum, one sandbox scorer
    (its cache makes several pass rewards over a batch one sandbox run), and where the scored
    batch goes. Plain data, so the reward functions holding it pickle."""

    problems: dict[str, Problem]
    """Problems by id."""
    curriculum: TierCurriculum
    """Schedule and weights of the tier-weighted reward."""
    scorer: Scorer | None
    """Runs completions in the sandbox (None when no pass reward is asked for)."""
    primary: str | None
    """The pass reward that reports the batch (rollouts, live statistics, metrics): the first asked for."""
    planned_steps: int | None = None
    """Steps the schedule is laid over (None: the run's max_steps)."""
    on_scored: Callable[..., None] | None = None
    """Called with each scored batch: `(trainer_state, prompts, completions, problem_ids, results, rewards, completion_ids)`."""
    stats: ProblemStats | None = None
    """Live-sampling statistics, fed every rank's rewards."""
    live: LiveAllocation | None = None
    """The dynamic schedule's α as the callback last set it (None: the curriculum's schedule alone)."""

    def progress(self, trainer_state: Any) -> float:
        """The schedule's progress: global_step over the planned steps, 1.0 outside training."""
        total = self.planned_steps or (getattr(trainer_state, "max_steps", 0) if trainer_state is not None else 0)
        return min(1.0, trainer_state.global_step / total) if trainer_state is not None and total else 1.0

    def score(
        self,
        name: str,
        prompts: Sequence[Any] | None,
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None,
        problem_id: Sequence[str],
        trainer_state: Any,
        log_metric: Callable[[str, float], None] | None,
    ) -> list[float | None]:
        assert self.scorer is not None, "make_reward_functions gives a scorer wherever a pass reward is asked for"
        scoring = PASS_SCORES[name]
        texts = [_text(c) for c in completions]
        results = self.scorer.run(list(problem_id), texts)
        progress = self.progress(trainer_state)
        rewards: list[float | None] = []
        tier_totals: dict[str, list[float]] = {t: [] for t in TIERS}
        for pid, result in zip(problem_id, results):
            if result.status in SANDBOX_FAULTS:
                rewards.append(None)
                continue
            rates = pass_rates(self.problems[pid], result)
            for tier, rate in rates.items():
                if rate is not None:
                    tier_totals[tier].append(rate)
            rewards.append(scoring(rates, result, self, progress))
        if name == self.primary:
            if self.on_scored is not None:
                self.on_scored(
                    trainer_state,
                    list(prompts or [None] * len(completions)),
                    texts,
                    list(problem_id),
                    results,
                    rewards,
                    completion_ids,
                )
            if self.stats is not None:
                self.stats.observe(*gathered(list(problem_id), rewards))
            if log_metric is not None:
                for tier, values in tier_totals.items():
                    if values:
                        log_metric(f"pass_rate/{tier}", sum(values) / len(values))
                for tier, alpha in self.curriculum.allocation(progress, live=self.live).items():
                    log_metric(f"alpha/{tier}", alpha)
                log_metric("schedule_progress", progress)
        return rewards


class PassReward:
    """`tarot_reward`, `avg_reward` or `pass_all_reward` as a TRL reward callable: a class, as TRL's
    own picklable rewards are, named by `__name__` (TRL names its metrics so)."""

    def __init__(self, name: str, context: RewardContext) -> None:
        if name not in PASS_SCORES:
            raise InputError(f"{name!r} is not a pass reward; use one of {', '.join(PASS_SCORES)}")
        self.__name__ = name
        self.context = context

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: Sequence[Sequence[int]] | None = None,
        *,
        problem_id: Sequence[str],
        trainer_state: Any = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        return self.context.score(
            self.__name__, prompts, completions, completion_ids, problem_id, trainer_state, log_metric
        )


class FormatReward:
    """`format_reward`: `format_score` of each completion against its problem; nothing is run."""

    __name__ = FORMAT_REWARD  # read on an instance: TRL names its metrics so

    def __init__(self, problems: dict[str, Problem]) -> None:
        self.problems = problems

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: Sequence[Sequence[int]] | None = None,
        *,
        problem_id: Sequence[str],
        **kwargs: Any,
    ) -> list[float]:
        return [format_score(_text(c), self.problems[pid]) for c, pid in zip(completions, problem_id)]


def make_reward_functions(
    problems: Sequence[Problem],
    curriculum: TierCurriculum | None = None,
    limits: Limits | None = None,
    workers: int | None = None,
    allow_unsandboxed: bool = False,
    on_scored: Callable[..., None] | None = None,
    names: Sequence[str] = ("tarot_reward", "avg_reward", "pass_all_reward"),
    planned_steps: int | None = None,
    stats: ProblemStats | None = None,
    live: LiveAllocation | None = None,
) -> list[PassReward | FormatReward]:
    """The reward functions `names` (from tarot_reward, avg_reward, pass_all_reward, format_reward)
    for `GRPOTrainer(reward_funcs=...)`, in that order; they pickle (with a picklable `on_scored`).

    Each takes TRL's `(prompts, completions, completion_ids, **kwargs)` and reads the dataset's
    `problem_id` column and TRL's `trainer_state` and `log_metric` from kwargs. The schedule's
    progress is `global_step / planned_steps` (default: the run's max_steps). The first pass
    reward of a batch (they share one sandbox run) calls `on_scored(trainer_state, prompts,
    completions, problem_ids, results, rewards, completion_ids)` — the rollouts with their
    per-test outcomes — and feeds `stats` (live sampling) with every rank's rewards. `live`: the
    dynamic schedule's α as the callback last set it (None: the curriculum's schedule alone).
    """
    offered = [*PASS_SCORES, FORMAT_REWARD]
    unknown = [n for n in names if n not in offered]
    if unknown:
        raise InputError(f"reward function(s) {unknown} unknown; use {', '.join(offered)}")
    by_id = {p.problem_id: p for p in problems}
    needs_sandbox = any(n in PASS_SCORES for n in names)
    context = RewardContext(
        by_id,
        curriculum or TierCurriculum(),
        Scorer(by_id, limits or Limits(), workers, allow_unsandboxed=allow_unsandboxed) if needs_sandbox else None,
        next((n for n in names if n in PASS_SCORES), None),
        planned_steps,
        on_scored,
        stats,
        live,
    )
    return [PassReward(n, context) if n in PASS_SCORES else FormatReward(by_id) for n in names]


def named_problem_ids(path: Path) -> set[str]:
    """The `problem_id`s a completions file names, read leniently (`read_completions` reports what
    is wrong with a line): the problems a scorer needs to build and no others."""
    ids = set()
    for raw in path.read_bytes().split(b"\n"):
        try:
            record = json.loads(raw) if raw.strip() else None
        except ValueError:  # not JSON, not UTF-8: read_completions names it
            continue
        if isinstance(record, dict) and isinstance(record.get("problem_id"), str):
            ids.add(record["problem_id"])
    return ids


def read_completions(
    path: Path, problems: Sequence[Problem], problems_label: str
) -> tuple[list[dict[str, str]], list[str]]:
    """A JSONL file of `{problem_id, completion_id, completion}`: the completions to score, and one
    line per refused record naming the file, the line and the fix (the others are still scored)."""
    known = {p.problem_id for p in problems}
    completions, refused = [], []
    first_line: dict[str, int] = {}  # completion_id -> the line that holds it
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            refused.append(f"{where}: not valid UTF-8 (byte {exc.start}). Re-encode the file as UTF-8")
            continue
        except json.JSONDecodeError as exc:
            refused.append(f"{where}: invalid JSON ({exc.msg}). Fix the line")
            continue
        if not isinstance(record, dict):
            refused.append(
                f"{where}: expected a JSON object {{problem_id, completion_id, completion}}, got "
                f"{type(record).__name__ if record is not None else 'null'}. Fix the line"
            )
            continue
        missing = [k for k in ("problem_id", "completion_id", "completion") if not isinstance(record.get(k), str)]
        if missing:
            refused.append(f"{where}: field {missing[0]} is missing or not a string. Add it")
        elif record["completion_id"] in first_line:
            refused.append(
                f"{where}: completion_id {record['completion_id']!r} is already on line "
                f"{first_line[record['completion_id']]}. Give each completion its own id"
            )
        elif record["problem_id"] not in known:
            refused.append(
                f"{where}: field problem_id: {record['problem_id']!r} is not in {problems_label}. "
                "Pass the problems the completions were made for"
            )
        else:
            first_line[record["completion_id"]] = number
            completions.append(record)
    return completions, refused


def score_completions(
    problems: Sequence[Problem],
    completions: Sequence[dict[str, Any]],
    curriculum: TierCurriculum | None = None,
    limits: Limits | None = None,
    workers: int | None = None,
    allow_unsandboxed: bool = False,
) -> list[dict[str, Any]]:
    """`curriculab reward`: one `{completion_id, problem_id, reward, pass_rate: {tier: x}, status}` per completion."""
    curriculum = curriculum or TierCurriculum()
    scorer = Scorer(
        {p.problem_id: p for p in problems}, limits or Limits(), workers, allow_unsandboxed=allow_unsandboxed
    )
    results = scorer.run([c["problem_id"] for c in completions], [c["completion"] for c in completions])
    out = []
    for completion, result in zip(completions, results):
        problem = scorer.problems[completion["problem_id"]]
        rates = pass_rates(problem, result)
        reward = None if result.status in SANDBOX_FAULTS else tarot_score(rates, curriculum)
        out.append(
            {
                "completion_id": completion["completion_id"],
                "problem_id": completion["problem_id"],
                "reward": reward,
                "pass_rate": rates,
                "status": result.status,
                "failed_tests": [f"{o.test_id}: {o.status}" for o in result.outcomes if not o.passed][:10],
            }
        )
    return out
