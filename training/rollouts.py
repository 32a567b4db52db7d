"""Every scored completion of a training run as a canonical trajectory line, one JSONL shard per
step under `<output_dir>/rollouts/`, ingested (and coded by the verifier) at each checkpoint.

A rollout keeps what the verifier coder reads: the completion's text, why generation stopped
(`finish_reason`, TRL's rule: the last token is neither EOS nor padding → `length`), the
problem's entry point, and each test's tier, status and detail.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.analysis.queries import TRAINING_AGENT
from curriculab.taxonomy.completion import extract_code
from curriculab.training.problems import Problem

if TYPE_CHECKING:
    from curriculab.training.sandbox.runner import RunResult

COMPLETION_KEY = "completion"
"""Key of the agent step's `raw` that marks a single-turn completion (the verifier coder reads it)."""


def finish_reason(ids: Sequence[int] | None, stop_ids: Sequence[int]) -> str | None:
    """`stop` when the completion ended on one of `stop_ids` (EOS or padding) or is empty,
    `length` when it was cut at the limit, None when the token ids are unknown."""
    if ids is None:
        return None
    ids = list(ids)
    return "stop" if not ids or ids[-1] in set(stop_ids) else "length"


def completion_record(
    *,
    trajectory_id: str,
    run: dict[str, Any],
    model: str,
    problem: Problem,
    attempt: int,
    prompt: str,
    completion: str,
    result: RunResult,
    reward: float | None,
    finish: str | None = None,
    completion_tokens: int | None = None,
) -> dict[str, Any]:
    """One scored completion as a canonical trajectory (curriculab JSONL)."""
    tiers = {t.test_id: t.tier for t in problem.tests}
    fault = result.status == "sandbox_error"
    passed = bool(result.outcomes) and all(o.passed for o in result.outcomes)
    return {
        "trajectory_id": trajectory_id,
        "run_id": run["run_id"],
        "task_id": problem.problem_id,
        "model": model,
        "attempt": attempt,
        "outcome": "error" if fault else "passed" if passed else "failed",
        "reward": reward,
        "harness_error": "sandbox_error" if fault else None,
        "output_tokens": completion_tokens,
        "steps": [
            {"step_idx": 0, "source": "user", "action": "message", "message": prompt},
            {
                "step_idx": 1,
                "source": "agent",
                "action": "edit",
                "path": "solution.py",
                "message": completion,
                "output": extract_code(completion, problem.entry_point)[:4000],
                "raw": {
                    COMPLETION_KEY: {
                        "entry_point": problem.entry_point,
                        "finish_reason": finish,
                        "completion_tokens": completion_tokens,
                    }
                },
            },
        ],
        "test_results": [
            {
                "test_id": o.test_id,
                "tier": tiers.get(o.test_id),
                "passed": o.passed,
                "status": o.status,
                "detail": (o.detail or None) and o.detail[:2000],
            }
            for o in result.outcomes
        ],
        "run": run,
    }


@dataclass
class RolloutWriter:
    """Writes every scored completion as a canonical trajectory line, one shard per step."""

    directory: Path
    """Where the shards go (`<output_dir>/rollouts`)."""
    run_id: str
    """The training run."""
    base_model: str
    """The model's short name; trajectories say `<base_model>@step<N>`."""
    problems: dict[str, Problem]
    """Problems by id, for test tiers and entry points."""
    run_config: dict[str, Any] = field(default_factory=dict)
    """Stored with the run: plan id, seed, settings."""
    model_label: str | None = None
    """The model name in the store, when not `<base_model>@step<N>` (the loop names rounds)."""
    stop_ids: tuple[int, ...] = ()
    """Token ids that end a completion (EOS, padding): a completion ending otherwise was truncated."""
    seconds: float = 0.0
    """Time spent writing (for the store-overhead figure)."""
    rank: int = 0
    """This process's rank in a multi-process run: each rank scores (and writes) its own completions,
    into shards and ids of its own (`step-000012.rank1.jsonl`, `.../step000012/r1-0003`)."""
    _counts: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def __call__(
        self,
        trainer_state: Any,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        problem_ids: Sequence[str],
        results: Sequence[RunResult],
        rewards: Sequence[float | None],
        completion_ids: Sequence[Sequence[int]] | None = None,
    ) -> None:
        started = time.perf_counter()
        step = int(getattr(trainer_state, "global_step", 0) or 0)
        run = {
            "run_id": self.run_id,
            "agent": TRAINING_AGENT,
            "model": self.base_model,
            "dataset": "grpo-rollouts",
            "source_format": "jsonl",
            "config": self.run_config,
        }
        ids_of = list(completion_ids) if completion_ids is not None else [None] * len(completions)
        lines = []
        for prompt, completion, problem_id, result, reward, ids in zip(
            prompts, completions, problem_ids, results, rewards, ids_of
        ):
            index = self._counts.get(step, 0)
            self._counts[step] = index + 1
            record = completion_record(
                trajectory_id=f"{self.run_id}/step{step:06d}/{self._id_tag}{index:04d}",
                run=run,
                model=self.model_label or f"{self.base_model}@step{step}",
                problem=self.problems[problem_id],
                attempt=index,
                prompt=prompt_text(prompt),
                completion=completion,
                result=result,
                reward=reward,
                finish=finish_reason(ids, self.stop_ids) if self.stop_ids else None,
                completion_tokens=None if ids is None else len(ids),
            )
            lines.append(json.dumps(record))
        with open(self.directory / f"step-{step:06d}{self._shard_tag}.jsonl", "a") as shard:
            shard.write("\n".join(lines) + "\n")
        self.seconds += time.perf_counter() - started

    @property
    def _id_tag(self) -> str:
        return "" if self.rank == 0 else f"r{self.rank}-"

    @property
    def _shard_tag(self) -> str:
        return "" if self.rank == 0 else f".rank{self.rank}"

    def drop_after(self, step: int) -> int:
        """Delete the shards generated after checkpoint `step` (a shard is named by the global step
        at generation, i.e. the step before the update it feeds); a resumed run generates them again."""
        dropped = 0
        for shard in self.directory.glob("step-*.jsonl"):
            if shard_rank(shard) == self.rank and shard_step(shard) >= step:
                shard.unlink()
                dropped += 1
        return dropped


def shard_step(path: Path) -> int:
    """The global step a shard was generated at (`step-000012.jsonl`, `step-000012.rank1.jsonl`)."""
    return int(path.name.split(".")[0].split("-")[1])


def shard_rank(path: Path) -> int:
    parts = path.name.split(".")
    return int(parts[1][4:]) if len(parts) == 3 and parts[1].startswith("rank") else 0


def prompt_text(prompt: Any) -> str:
    """The prompt as text (a conversational prompt's messages joined)."""
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return str(prompt)
