"""Live task sampling: within a run, problems whose recent GRPO groups were all-same (every
completion scored 0, or every one scored the maximum) are drawn less, and re-tried now and then.

A group whose rewards are all equal carries no gradient (TRL logs the share as
`frac_reward_zero_std`); the chance of that is pᴳ + (1 − p)ᴳ for a problem solved with
probability p in groups of G. Each problem keeps two Beta posteriors from the reward function's
own in-process results (never store reads): q, the chance a completion scores above 0, and r,
the chance it scores the maximum. Its weight is the expected chance that a group is informative,

    w = 1 − E[(1 − q)ᴳ] − E[rᴳ]     (exact Beta moments), raised to `sharpness`, floored at `floor`,

so a problem never tried weighs (G − 1)/(G + 1) before sharpening, one that keeps failing
falls towards the floor, and evidence fades by `decay` per new group as the model changes.

`LiveRepeatSampler` keeps TRL's `RepeatSampler` semantics: each drawn prompt index is repeated
`mini_repeat_count` (= num_generations) times in a row, each chunk of `batch_size` indices
`repeat_count` times, and every rank draws the same order from the same seed and the same
statistics (gathered across ranks before they are updated), so groups stay whole. Unlike
RepeatSampler, a chunk is drawn with replacement: when few problems are informative, two groups
of the same prompt in one batch are still two valid GRPO groups, and better than a dead one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LiveSamplingSettings:
    """How strongly live sampling moves draws away from all-same problems."""

    enabled: bool = True
    """Whether the trainer draws with `LiveRepeatSampler` (False: TRL's own RepeatSampler)."""
    decay: float = 0.7
    """Weight of earlier evidence each time a problem gets a new group (1: never forget)."""
    sharpness: float = 4.0
    """Exponent on the informative-group probability: higher demotes hopeless problems harder."""
    floor: float = 0.02
    """Smallest weight, so a demoted problem is still re-tried now and then."""

    def __post_init__(self) -> None:
        if not 0 < self.decay <= 1:
            raise ValueError(f"LiveSamplingSettings.decay is {self.decay}; use a value in (0, 1]")
        if self.sharpness <= 0:
            raise ValueError(f"LiveSamplingSettings.sharpness is {self.sharpness}; use a positive value")
        if not 0 < self.floor <= 1:
            raise ValueError(f"LiveSamplingSettings.floor is {self.floor}; use a value in (0, 1]")


def _beta_power_moment(a: float, b: float, power: int) -> float:
    """E[xᵖ] for x ~ Beta(a, b)."""
    moment = 1.0
    for i in range(power):
        moment *= (a + i) / (a + b + i)
    return moment


@dataclass
class ProblemStats:
    """Per problem, decayed counts of completions scoring above 0 and scoring the maximum."""

    group_size: int
    """G, completions per prompt."""
    settings: LiveSamplingSettings = field(default_factory=LiveSamplingSettings)
    """Decay, sharpness and floor."""
    counts: dict[str, list[float]] = field(default_factory=dict)
    """problem_id → [above 0, at 0, at max, below max] (decayed)."""
    groups: int = 0
    """Groups observed."""
    all_same: int = 0
    """Of which all-same (for the run's summary)."""

    def observe(self, problem_ids: Sequence[str], rewards: Sequence[float | None], max_reward: float = 1.0) -> None:
        """Fold in one generation batch: completions of the same problem form its group."""
        grouped: dict[str, list[float]] = {}
        for pid, reward in zip(problem_ids, rewards):
            if reward is not None:  # a sandbox fault says nothing about the problem
                grouped.setdefault(pid, []).append(float(reward))
        for pid, values in grouped.items():
            self.groups += 1
            self.all_same += max(values) - min(values) < 1e-9
            above = sum(v > 1e-9 for v in values)
            full = sum(v >= max_reward - 1e-9 for v in values)
            old = [c * self.settings.decay for c in self.counts.get(pid, [0.0, 0.0, 0.0, 0.0])]
            self.counts[pid] = [
                old[0] + above,
                old[1] + len(values) - above,
                old[2] + full,
                old[3] + len(values) - full,
            ]

    def weight(self, problem_id: str) -> float:
        """The expected chance that a group of this problem is informative, sharpened and floored."""
        above, zero, full, short = self.counts.get(problem_id, [0.0, 0.0, 0.0, 0.0])
        g = self.group_size
        informative = 1.0 - _beta_power_moment(1 + zero, 1 + above, g) - _beta_power_moment(1 + full, 1 + short, g)
        return float(max(self.settings.floor, max(informative, 0.0) ** self.settings.sharpness))


class LiveRepeatSampler:
    """TRL's RepeatSampler order, with each chunk's prompts drawn by `ProblemStats` weights."""

    def __init__(
        self,
        problem_ids: Sequence[str],
        stats: ProblemStats,
        mini_repeat_count: int,
        batch_size: int = 1,
        repeat_count: int = 1,
        seed: int = 0,
    ) -> None:
        if batch_size > len(problem_ids):
            raise ValueError(
                f"a generation batch of {batch_size} prompts needs at least as many dataset rows; "
                f"the dataset has {len(problem_ids)}"
            )
        self.problem_ids = list(problem_ids)
        self.stats = stats
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count
        self.seed = seed
        self.epoch = 0

    def __iter__(self) -> Iterator[int]:
        import torch

        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        self.epoch += 1
        for _ in range(len(self.problem_ids) // self.batch_size):
            # Drawn when the chunk is needed, so each draw sees the groups scored so far.
            weights = torch.tensor([self.stats.weight(p) for p in self.problem_ids], dtype=torch.float64)
            chunk = torch.multinomial(weights, self.batch_size, replacement=True, generator=generator).tolist()
            for _ in range(self.repeat_count):
                for index in chunk:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return (len(self.problem_ids) // self.batch_size) * self.batch_size * self.mini_repeat_count * self.repeat_count


def gathered(problem_ids: list[str], rewards: list[float | None]) -> tuple[list[str], list[float | None]]:
    """Every rank's (problem id, reward) pairs of this batch, in rank order, so all ranks update the
    same statistics (a no-op in one process)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return problem_ids, rewards
    parts: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(parts, list(zip(problem_ids, rewards)))
    pairs = [pair for part in parts for pair in part]
    return [p for p, _ in pairs], [r for _, r in pairs]
