"""`CurriculumGRPOTrainer`: TRL's GRPOTrainer drawing prompts with the live sampler, when one is given.

TRL has no curriculum sampler; this keeps its `RepeatSampler` group semantics (see
`training.sampling.LiveRepeatSampler`) and changes only which prompts fill each chunk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from trl import GRPOTrainer

from curriculab.training.sampling import LiveRepeatSampler, ProblemStats
from curriculab.training.timing import StepClock


class CurriculumGRPOTrainer(GRPOTrainer):
    """A GRPOTrainer whose training sampler is `LiveRepeatSampler` when `live_stats` is given, and
    whose generation and rewards are timed on `clock` when one is given: generation in seconds and
    completion tokens, rewards split into scoring and the rollout writes the rewards make
    (`written_s()`: seconds written so far). Each of `episode_hooks` is called after each batch's
    rewards with the batch's environments, completions and the step (an agentic run's episode log):
    a reward function only scores."""

    def __init__(
        self,
        *args: Any,
        live_stats: ProblemStats | None = None,
        clock: StepClock | None = None,
        written_s: Callable[[], float] = lambda: 0.0,
        episode_hooks: Sequence[Callable[[Sequence[Any], Sequence[Any], int], None]] = (),
        **kwargs: Any,
    ) -> None:
        self.live_stats, self.clock, self.written_s = live_stats, clock, written_s
        self.episode_hooks = list(episode_hooks)
        self.reward_seconds = 0.0
        """Wall time in the reward functions over the run (the sandbox, and the rollout writes they make)."""
        super().__init__(*args, **kwargs)

    def _environment_s(self) -> float:
        return self.clock.environment_s if self.clock is not None else 0.0

    # TRL's private hooks, overridden with its own signatures (its trainer carries no annotations there)
    def _calculate_rewards(
        self, inputs: list[dict[str, Any]], prompts: list[Any], completions: list[Any], completion_ids_list: list[Any]
    ) -> Any:
        started, written, environment = time.perf_counter(), self.written_s(), self._environment_s()
        try:
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            for hook in self.episode_hooks:  # this process's environments, before the next reset
                hook(self.environments or [], completions, int(self.state.global_step))
            return rewards
        finally:
            elapsed, writing = time.perf_counter() - started, self.written_s() - written
            self.reward_seconds += elapsed
            if self.clock is not None:  # an agentic episode's verdict is the environment's time
                judged = self._environment_s() - environment
                self.clock.add(reward_s=max(0.0, elapsed - writing - judged), store_s=writing)

    def _generate(self, prompts: list[Any]) -> Any:
        started, environment = time.perf_counter(), self._environment_s()
        out = super()._generate(prompts)
        if self.clock is not None:  # an agent's tool calls run inside generation: they are the environment's
            elapsed = time.perf_counter() - started - (self._environment_s() - environment)
            self.clock.add(generation_s=max(0.0, elapsed), generated_tokens=sum(len(ids) for ids in out[1]))
        return out

    def _get_train_sampler(self, dataset: Any = None) -> Any:
        if self.live_stats is None:
            return super()._get_train_sampler(dataset)
        dataset = self.train_dataset if dataset is None else dataset
        args: Any = self.args  # a GRPOConfig: its generation fields are not TrainingArguments'
        groups = int(args.num_generations)  # what TRL copies into self.num_generations
        return LiveRepeatSampler(
            dataset["problem_id"],
            self.live_stats,
            mini_repeat_count=groups,
            batch_size=args.generation_batch_size // groups,
            repeat_count=self.num_iterations * args.steps_per_generation,
            seed=args.seed,
        )
