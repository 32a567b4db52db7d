"""TAROT's portfolio as released: schedules (which tiers are practised when) × reward weights
(what a pass on a tier is worth), the Avg-reward and Pass@All baselines, and the
capability-adaptive choice between them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from curriculab.trajectory.errors import CurriculabError
from curriculab.trajectory.vocabulary import TIERS

REWARD_FUNCTIONS = ("tarot_reward", "avg_reward", "pass_all_reward", "format_reward")
"""The reward functions a plan may name (`grpo.functions`), each a plain callable in
`training.rewards` (here, not in the config models: scoring imports no pydantic)."""
TERMINAL_REWARD_FUNCTIONS = ("milestone_reward", "pass_reward", "verification_reward")
"""Reward functions of a terminal-task plan (`training.terminal.rewards`)."""

PHASE_STARTS = (0.0, 0.2, 0.4, 0.6)
"""Fractions of training at which a staged schedule adds its next tier (TAROT)."""
ORDERS: dict[str, tuple[str, ...]] = {
    "forward": ("basic", "intermediate", "complex", "edge"),
    "reversed": ("complex", "edge", "intermediate", "basic"),
}
"""The order in which a staged schedule adds tiers."""


class SettingsError(CurriculabError, ValueError):
    """A schedule, weight preset or threshold that cannot be used; the message names it and the values allowed."""


def _staged(order: tuple[str, ...]) -> list[tuple[float, tuple[str, ...]]]:
    return [(start, order[: k + 1]) if k < 3 else (start, TIERS) for k, start in enumerate(PHASE_STARTS)]


SCHEDULES: dict[str, list[tuple[float, tuple[str, ...]]]] = {
    # (from fraction of training done, active tiers), as released with TAROT
    "forward": _staged(ORDERS["forward"]),
    "reversed": _staged(ORDERS["reversed"]),
    "all": [(0.0, TIERS)],
    **{f"static-{tier}": [(0.0, (tier,))] for tier in TIERS},
}
WEIGHTS: dict[str, dict[str, float]] = {
    "uniform": {"basic": 0.25, "intermediate": 0.25, "complex": 0.25, "edge": 0.25},
    "basic-intermediate": {"basic": 0.35, "intermediate": 0.35, "complex": 0.15, "edge": 0.15},
    "complex-edge": {"basic": 0.15, "intermediate": 0.15, "complex": 0.35, "edge": 0.35},
}
Strategy = Literal["tarot", "avg_reward", "pass_all"]
"""TAROT's tier-weighted reward, or one of its baselines: the mean pass rate over all tests, 1 only if every test passes."""
STRATEGIES: tuple[str, ...] = get_args(Strategy)


def schedule_phases(schedule: str, start_tier: str | None = None) -> list[tuple[float, tuple[str, ...]]]:
    """The phases of `schedule`; a staged schedule may start on a later tier of its order (the
    zero-variance guard moves it): that tier comes first, the rest follow in the schedule's order."""
    if schedule not in SCHEDULES:
        raise SettingsError(f"schedule {schedule!r} is unknown. Use one of: {', '.join(SCHEDULES)}")
    if start_tier is None or schedule not in ORDERS or start_tier == ORDERS[schedule][0]:
        return SCHEDULES[schedule]
    if start_tier not in TIERS:
        raise SettingsError(f"start_tier {start_tier!r} is not a tier. Tiers are {', '.join(TIERS)}")
    order = (start_tier, *(t for t in ORDERS[schedule] if t != start_tier))
    return _staged(order)


@dataclass
class LiveAllocation:
    """The α the dynamic schedule chose last, during a run: the `DynamicSchedule` callback writes it,
    the reward functions read it. Until it is set, the curriculum's own schedule holds."""

    alpha: dict[str, float] | None = None
    """Relative α per tier (tiers at 0 are inactive), or None."""


def parse_weights(text: str | None) -> dict[str, float] | str:
    """`--weights` as given on a command line: `basic=0.35,intermediate=0.35,...` (a dict), a preset
    name (returned as it is, for TierCurriculum to check), or nothing (`uniform`)."""
    if not text:
        return "uniform"
    if "=" not in text:
        return text
    weights = {}
    for part in text.split(","):
        tier, _, value = part.partition("=")
        try:
            weights[tier.strip()] = float(value)
        except ValueError:
            raise SettingsError(
                f"--weights part {part!r} is not tier=number. Write e.g. "
                "basic=0.35,intermediate=0.35,complex=0.15,edge=0.15"
            ) from None
    return weights


@dataclass
class TierCurriculum:
    """A schedule (which tiers are active when), weights (what each tier is worth) and, from the
    planner, a bias on α towards the tiers that target the model's failures."""

    schedule: str = "all"
    """forward, reversed, all, or static-<tier>."""
    weights: dict[str, float] | str = "uniform"
    """A preset name (uniform, basic-intermediate, complex-edge) or {tier: weight}."""
    start_tier: str | None = None
    """For forward/reversed: the tier to start on when it is not the schedule's first."""
    alpha_bias: dict[str, float] = field(default_factory=dict)
    """Relative α per tier among the active ones (default 1 each)."""

    @property
    def tier_weights(self) -> dict[str, float]:
        """`weights` as {tier: weight} (a preset's name is resolved when the curriculum is made)."""
        return self.weights if isinstance(self.weights, dict) else dict(WEIGHTS[self.weights])

    def __post_init__(self) -> None:
        schedule_phases(self.schedule, self.start_tier)  # validates both
        if isinstance(self.weights, str):
            if self.weights not in WEIGHTS:
                raise SettingsError(
                    f"weights {self.weights!r} is unknown. Use a preset ({', '.join(WEIGHTS)}) or a dict"
                )
            self.weights = dict(WEIGHTS[self.weights])
        for name, mapping in (("weights", self.weights), ("alpha_bias", self.alpha_bias)):
            unknown = set(mapping) - set(TIERS)
            if unknown:
                raise SettingsError(f"{name} name unknown tier(s) {sorted(unknown)}. Tiers are {', '.join(TIERS)}")
            if any(v < 0 for v in mapping.values()):
                raise SettingsError(f"{name} must be non-negative")
        if sum(self.weights.values()) <= 0:
            raise SettingsError("weights must not all be zero")

    def active(self, progress: float, live: LiveAllocation | None = None) -> tuple[str, ...]:
        """Tiers practised at `progress` (fraction of training done, 0..1), or, once the dynamic
        schedule has set `live`, the tiers it gives α."""
        if live is not None and live.alpha is not None:
            return tuple(t for t in TIERS if live.alpha.get(t, 0.0) > 0)
        phases = schedule_phases(self.schedule, self.start_tier)
        current = phases[0][1]
        for start, tiers in phases:
            if progress >= start:
                current = tiers
        return current

    def allocation(
        self, progress: float, tiers_with_tests: tuple[str, ...] = TIERS, live: LiveAllocation | None = None
    ) -> dict[str, float]:
        """α per tier: 0 for inactive tiers; active tiers share it (by `alpha_bias`, or by `live`
        once the dynamic schedule has set it) so that Σ α_l w_l = 1, i.e. a completion passing every
        active test scores 1."""
        active = [t for t in self.active(progress, live) if t in tiers_with_tests]
        bias: dict[str, float] = live.alpha if live is not None and live.alpha is not None else self.alpha_bias
        total = sum(bias.get(t, 1.0) * self.tier_weights.get(t, 0.0) for t in active) or 1.0
        return {t: (bias.get(t, 1.0) / total if t in active else 0.0) for t in TIERS}


def p_all_same(p: float, group_size: int) -> float:
    """Chance that a GRPO group of `group_size` completions all pass or all fail at pass rate p
    (such a group has zero reward variance: no gradient)."""
    return p**group_size + (1 - p) ** group_size


@dataclass(frozen=True)
class Thresholds:
    """Where the capability-adaptive choice switches (capability = mean per-tier pass rate)."""

    weak_below: float = 0.65
    """Below this a model is weak: easy-to-hard (forward) with basic/intermediate weights."""
    strong_from: float = 0.75
    """From this a model is strong: hard-first (reversed) with complex/edge weights."""
    max_same_share: float = 0.5
    """Zero-variance guard: refuse a start tier where more than this share of groups is all-same."""
    group_size: int = 8
    """GRPO group size (num_generations) the guard assumes."""

    def __post_init__(self) -> None:
        if not 0 < self.weak_below <= self.strong_from < 1:
            raise SettingsError(
                f"thresholds need 0 < weak_below ({self.weak_below}) <= strong_from ({self.strong_from}) < 1"
            )
        if not 0 < self.max_same_share < 1:
            raise SettingsError(f"max_same_share is {self.max_same_share}; give a share between 0 and 1, like 0.5")
        if self.group_size < 2:
            raise SettingsError(f"group_size is {self.group_size}; GRPO needs at least 2 completions per group")


def choose(capability: float, thresholds: Thresholds = Thresholds()) -> tuple[str, str, str]:
    """(band, schedule, weights) for a capability, as TAROT found: weaker models gain most from
    easy-to-hard with basic-weighted rewards, stronger ones from hard-first with complex/edge."""
    if capability < thresholds.weak_below:
        return "weak", "forward", "basic-intermediate"
    if capability >= thresholds.strong_from:
        return "strong", "reversed", "complex-edge"
    return "middle", "forward", "uniform"
