"""The dynamic schedule (TAROT's open question): α per tier updated during training from live
per-tier pass rates, so that each practised tier stays in the informative band.

A GRPO group carries gradient only when its completions differ; the expected signal of a tier
at pass rate p is p(1 − p), highest at p = 0.5. The policy practises the tiers whose smoothed
pass rate is in the band, with α ∝ p(1 − p) among them; a tier joins when it is inside the band by
a margin and leaves only when it is outside the band by that margin (hysteresis), and no tier
changes state before it has held the current one for `min_dwell` updates. If no tier is in the band, the one closest
to it is practised, so training never stalls.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from curriculab.trajectory.vocabulary import TIERS


@dataclass(frozen=True)
class DynamicSettings:
    """How the dynamic schedule reacts."""

    band: tuple[float, float] = (0.2, 0.8)
    """Pass rates at which a tier is informative."""
    margin: float = 0.05
    """Hysteresis: a tier joins inside band ∓ margin and leaves outside band ± margin."""
    min_dwell: int = 3
    """Updates a tier keeps its state before it may change."""
    smoothing: float = 0.5
    """Weight of the newest observation in the running pass rate (exponential moving average)."""
    alpha_floor: float = 0.05
    """Smallest share of α an active tier gets, so a tier near 0 or 1 is not starved at once."""

    def __post_init__(self) -> None:
        lo, hi = self.band
        if not 0 < lo < hi < 1:
            raise ValueError(f"band {self.band} must satisfy 0 < low < high < 1, like (0.2, 0.8)")
        if not 0 <= self.margin < min(lo, 1 - hi, (hi - lo) / 2):
            raise ValueError(f"margin {self.margin} must be >= 0 and smaller than the band's distance from 0 and 1")
        if self.min_dwell < 1 or not 0 < self.smoothing <= 1 or not 0 <= self.alpha_floor < 1:
            raise ValueError("min_dwell >= 1, 0 < smoothing <= 1 and 0 <= alpha_floor < 1 are required")


@dataclass(frozen=True)
class DynamicState:
    """Where the dynamic schedule stands; `next_allocation` returns the next one."""

    settings: DynamicSettings = field(default_factory=DynamicSettings)
    """Its settings."""
    members: tuple[str, ...] = ()
    """Tiers in the band (with hysteresis)."""
    active: tuple[str, ...] = ()
    """Tiers practised now: the members, or the tier closest to the band when there are none."""
    smoothed: tuple[tuple[str, float], ...] = ()
    """Running pass rate per tier."""
    dwell: tuple[tuple[str, int], ...] = tuple((t, 0) for t in TIERS)
    """Updates since each tier last changed state."""
    alpha: tuple[tuple[str, float], ...] = ()
    """The allocation: relative α per tier (0 when inactive), summing to 1."""
    switches: int = 0
    """How many times a tier joined or left so far."""

    def allocation(self) -> dict[str, float]:
        return {t: dict(self.alpha).get(t, 0.0) for t in TIERS}


def next_allocation(state: DynamicState, observed_pass_rates: dict[str, float | None]) -> DynamicState:
    """The next state (its `allocation()` is α per tier) from the pass rates seen since the last
    update. Pure: the same inputs give the same output; tiers without an observation keep theirs."""
    s = state.settings
    lo, hi = s.band
    smoothed = dict(state.smoothed)
    for tier, p in observed_pass_rates.items():
        if p is not None and tier in TIERS:
            smoothed[tier] = p if tier not in smoothed else (1 - s.smoothing) * smoothed[tier] + s.smoothing * p
    dwell = {t: n + 1 for t, n in state.dwell}
    members = set(state.members)
    switches = state.switches
    for tier in TIERS:
        p = smoothed.get(tier)
        if p is None:
            continue
        if dwell[tier] < s.min_dwell and state.smoothed:  # the first update may set every tier
            continue
        inside = lo + s.margin <= p <= hi - s.margin
        outside_margin = p < lo - s.margin or p > hi + s.margin
        if tier not in members and inside:
            members.add(tier)
            dwell[tier], switches = 0, switches + 1
        elif tier in members and outside_margin:
            members.discard(tier)
            dwell[tier], switches = 0, switches + 1
    active = set(members)
    if not active and smoothed:  # nothing informative: practise the tier closest to the band
        closest = min(smoothed, key=lambda t: (min(abs(smoothed[t] - lo), abs(smoothed[t] - hi)), TIERS.index(t)))
        active.add(closest)
    signal = {t: max(smoothed.get(t, 0.5) * (1 - smoothed.get(t, 0.5)), 1e-6) for t in active}
    total = sum(signal.values())
    alpha = {t: signal[t] / total for t in active}
    if s.alpha_floor and len(alpha) > 1:
        alpha = {t: max(a, s.alpha_floor) for t, a in alpha.items()}
        total = sum(alpha.values())
        alpha = {t: a / total for t, a in alpha.items()}
    ordered = tuple(t for t in TIERS if t in active)
    return replace(
        state,
        members=tuple(t for t in TIERS if t in members),
        active=ordered,
        smoothed=tuple((t, round(smoothed[t], 6)) for t in TIERS if t in smoothed),
        dwell=tuple((t, dwell[t]) for t in TIERS),
        switches=switches,
        alpha=tuple((t, round(alpha.get(t, 0.0), 6)) for t in TIERS),
    )
