"""What the planner reads from the store, through the read API: the target model's capability,
and which failure codes it may act on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.labels import EXACT_METHODS, system_planner_use
from curriculab.analysis.queries import COVERAGE_MIN
from curriculab.analysis.store import Store
from curriculab.taxonomy.taxonomy import load_taxonomy
from curriculab.trajectory.errors import CurriculabError
from curriculab.trajectory.vocabulary import TIERS

PRIORS = {"weak": 0.35, "strong": 0.85}
"""Capability assumed for a model the store has no evidence on (`--capability weak|strong`)."""


class PlanError(CurriculabError, ValueError):
    """A plan that cannot be made; the message says what to pass instead."""


class NeedsFit(PlanError):
    """The model's capability can come only from a difficulty (IRT) fit, and none is stored: fit one
    (`analysis.difficulty.fit_store`) and plan again."""


@dataclass
class Capability:
    """How able the target model is, where that comes from, and how sure it is."""

    value: float
    """Mean per-tier pass rate (0..1), the number the adaptive choice compares with its thresholds."""
    se: float | None
    """Its standard error (None for a prior)."""
    source: str
    """tier_pass_rates, irt or prior:<name>."""
    per_tier: dict[str, float | None] = field(default_factory=dict)
    """Measured pass rate per tier (None where no tests of the tier ran)."""
    per_tier_se: dict[str, float | None] = field(default_factory=dict)
    """Standard error per tier, over attempts."""
    evidence: str = ""
    """The figures, in words."""


def estimate_capability(store: Store, model: str, prior: str | None = None) -> Capability:
    """Per-tier pass rates from the model's rollouts (test_results.tier), else its IRT ability
    against the tasks' difficulty, else the named prior. A model the store does not know is an
    error listing the known ones, unless a prior is given."""
    if prior is not None and prior not in PRIORS:
        raise PlanError(f"--capability {prior!r} is not a prior; use one of: {', '.join(PRIORS)}")
    known = queries.known_models(store)
    if model not in known:
        if prior is None:
            listed = ", ".join(known) if known else "none (the store is empty)"
            raise PlanError(
                f"model {model!r} has no attempts in the store. Known models: {listed}. "
                "Plan for one of them, or give a prior: --capability weak|strong"
            )
        return _prior(prior, f"no rollouts of {model} in the store")
    rates = queries.tier_pass_rates(store, model=model)
    if not rates.empty:
        per_tier: dict[str, float | None] = {t: None for t in TIERS}
        per_se: dict[str, float | None] = {t: None for t in TIERS}
        for row in queries.records(rates):
            per_tier[row["tier"]], per_se[row["tier"]] = row["pass_rate"], row["se"]
        rates_by_tier = {t: (rate, per_se[t] or 0.0) for t, rate in per_tier.items() if rate is not None}
        value = sum(rate for rate, _ in rates_by_tier.values()) / len(rates_by_tier)
        se = math.sqrt(sum(error**2 for _, error in rates_by_tier.values())) / len(rates_by_tier)
        measured = list(rates_by_tier)
        words = ", ".join(f"{t} {per_tier[t]:.2f} ± {per_se[t]:.2f}" for t in measured)
        return Capability(
            value,
            se,
            "tier_pass_rates",
            per_tier,
            per_se,
            f"per-tier pass rates of {model} ({int(rates['trajectories'].sum())} tier-attempts): {words}",
        )
    abilities = queries.model_abilities(store, model=model)
    difficulty = queries.task_difficulty(store)
    if not abilities.empty and not difficulty.empty:
        theta, theta_se = float(abilities["ability"].iloc[0]), float(abilities["ability_se"].iloc[0])
        b = float(difficulty["difficulty"].median())
        a = float(difficulty["discrimination"].median())
        median_task = 1 / (1 + math.exp(-a * (theta - b)))
        # The thresholds are for a mean pass rate: average the prediction over the tasks the model was
        # measured on (the median task's prediction is not the mean of a skewed set), and say which.
        attempted = queries.attempted_tasks(store, model)
        measured = difficulty[difficulty["task_id"].isin(attempted)] if attempted else difficulty
        predictions = [
            1 / (1 + math.exp(-float(row.discrimination) * (theta - float(row.difficulty))))
            for row in measured.itertuples()
        ]
        value = sum(predictions) / len(predictions)
        slopes = [float(row.discrimination) * p * (1 - p) for row, p in zip(measured.itertuples(), predictions)]
        se = sum(slopes) / len(slopes) * theta_se  # delta method
        return Capability(
            value,
            se,
            "irt",
            {t: None for t in TIERS},
            {t: None for t in TIERS},
            f"IRT ability θ = {theta:.2f} ± {theta_se:.2f}: predicted pass rate {value:.2f} averaged over the "
            f"{len(predictions)} tasks {model} was measured on (on the median task, b = {b:.2f}, a = {a:.2f}, "
            f"it would be {median_task:.2f})",
        )
    if prior is None:
        raise NeedsFit(
            f"model {model!r} has no tiered test results and no IRT fit. Run `curriculab difficulty` "
            "to fit abilities, or give a prior: --capability weak|strong"
        )
    return _prior(prior, f"no measured capability for {model}")


def _prior(prior: str, why: str) -> Capability:
    return Capability(
        PRIORS[prior],
        None,
        f"prior:{prior}",
        {t: None for t in TIERS},
        {t: None for t in TIERS},
        f"{why}: assumed {prior} (capability {PRIORS[prior]:.2f})",
    )


@dataclass
class CodeDecision:
    """One failure code: acted on (with its shift) or ignored (with the reason)."""

    code: str
    """The taxonomy code."""
    share: float | None
    """Share of the model's judged failures with the code."""
    ci_low: float | None
    """Lower end of the share's 95% interval: the shift is sized by it."""
    ci_high: float | None
    """Upper end."""
    coverage: float | None
    """Share of failures the coder could judge."""
    tiers: list[str]
    """Tiers its remediation targets."""
    task_filters: list[str]
    """Problems that address it."""
    used: bool
    """Whether the plan acts on it."""
    reason: str
    """Why it is used or ignored."""
    coder: str = "rules"
    """The coder whose codes these are (rules, verifier, classifier:<id>, ...)."""
    reward_term: str | None = None
    """A reward term its remediation adds (format), instead of or beside a tier shift."""
    method: str = "labels"
    """How its reliability is known: labels (agreement with people) or verifier (exact by construction)."""


def failure_targets(
    store: Store, model: str, coder: str = "rules", min_share: float = 0.05, agent: str | None = None
) -> tuple[list[CodeDecision], str | None]:
    """The model's failure codes from one coder with their remediation targets (`agent`: the one
    system agent · model): only codes `planner_use` lets the planner read — reliable for the
    system's format families out of sample, or exact by construction, with a curriculum effect,
    and not mostly out of time — and whose coverage clears the report's threshold are used; the
    others are listed with the reason."""
    version = queries.latest_taxonomy_version(store, coder)
    if version is None:
        return [], None
    taxonomy = load_taxonomy(version)
    if agent is None:
        distribution = queries.records(
            queries.failure_distribution(store, coder, model=model, taxonomy_version=version)
        )
    else:
        distribution = [
            r
            for r in queries.failure_distribution.records(
                store, coder, taxonomy_version=version, scope=queries.Scope(agent=agent, model=model)
            )
            if r["code"] != "harness_failure"
        ]
    decided = system_planner_use(store, coder, version, model, agent, [row["code"] for row in distribution])
    decisions = []
    for row in distribution:
        code = row["code"]
        use = decided[code]
        target = taxonomy.get(code).target if code in taxonomy.code_names else None
        share, coverage = row["share"], row["coverage"]
        common = dict(
            code=code,
            share=share,
            ci_low=row["ci_low"],
            ci_high=row["ci_high"],
            coverage=coverage,
            tiers=list(target.tiers) if target else [],
            task_filters=list(target.task_filters) if target else [],
            coder=coder,
            reward_term=target.reward_term if target else None,
            method=use.method,
        )
        if not use.used:  # the one statement (`planner_use`) the pages and the report print too
            decisions.append(CodeDecision(**common, used=False, reason=use.why))
        elif coverage is None or coverage < COVERAGE_MIN:
            decisions.append(
                CodeDecision(
                    **common,
                    used=False,
                    reason=f"ignored: coverage {0 if coverage is None else coverage:.0%} under {COVERAGE_MIN:.0%}",
                )
            )
        elif (row["ci_low"] or 0) < min_share:
            decisions.append(
                CodeDecision(
                    **common,
                    used=False,
                    reason=f"ignored: share could be under {min_share:.0%} (95% CI from {row['ci_low']:.1%})",
                )
            )
        else:
            assert target is not None  # `planner_use` uses only codes with a remediation target
            effect = (", ".join(target.tiers) if target.tiers else "") + (
                f"{' and ' if target.tiers else ''}a {target.reward_term} reward term" if target.reward_term else ""
            )
            how = f"exact ({use.method})" if use.method in EXACT_METHODS else "reliable against labels"
            decisions.append(
                CodeDecision(
                    **common,
                    used=True,
                    reason=f"{share:.1%} of {n_judged(row)} judged failures (95% CI {row['ci_low']:.1%}–"
                    f"{row['ci_high']:.1%}, coverage {coverage:.0%}, {how}) → {effect}: {target.note}",
                )
            )
    return decisions, version


def time_reading(store: Store, model: str, agent: str | None = None) -> str | None:
    """A reason about time when most of `model`'s failures (`agent`: the system agent · model's) ran
    out of time (the harness recorded `agent_timeout`), naming the tasks it timed out on most; None
    otherwise."""
    scope = None if agent is None else queries.Scope(agent=agent, model=model)
    endings = queries.records(queries.failure_endings(store, model=model, scope=scope))
    failures, timed = sum(e["failures"] for e in endings), sum(e["timed_out"] for e in endings)
    if not failures or timed < queries.TIME_BOUND * failures:
        return None
    tasks = queries.records(queries.failure_endings(store, model=model, by="task", scope=scope))
    per_task: dict[str, int] = {}
    for t in tasks:
        per_task[t["task_id"]] = per_task.get(t["task_id"], 0) + t["timed_out"]
    longest = sorted((t for t in per_task if per_task[t]), key=lambda t: (-per_task[t], t))[:5]
    name = model if agent is None else f"{agent} · {model}"
    return (
        f"time: {timed} of {name}'s {failures} failures ({timed / failures:.0%}) ran out of time (agent_timeout), "
        f"most on {', '.join(f'{t} ({per_task[t]})' for t in longest)}: its failures are about time and long tasks, "
        "so they shift no tier towards easier tasks; give its episodes more time or turns, or split long tasks"
    )


def coded_decisions(
    store: Store, model: str, coders: Sequence[str], agent: str | None = None
) -> tuple[list[CodeDecision], list[str]]:
    """Every coder's `failure_targets` for `model` (`agent`: the system agent · model; none when the
    store does not know it) and the `coder:version` each read."""
    decisions: list[CodeDecision] = []
    versions = []
    if model in queries.known_models(store):
        for coder in coders:
            found, version = failure_targets(store, model, coder, agent=agent)
            decisions += found
            if version:
                versions.append(f"{coder}:{version}")
    return decisions, versions


def n_judged(row: dict[str, Any]) -> str:
    return str(int(row["applied"])) if row.get("applied") is not None else "the"


def reward_terms(decisions: list[CodeDecision], cap: float = 0.5) -> dict[str, tuple[float, list[str]]]:
    """Per reward term the used codes call for, its weight beside the pass reward and the codes:
    the largest lower 95% bound among them (they overlap — a truncated completion often has no
    closed block too — so their shares are not added), capped at `cap`."""
    terms: dict[str, tuple[float, list[str]]] = {}
    for d in decisions:
        if d.used and d.reward_term:
            weight, codes = terms.get(d.reward_term, (0.0, []))
            terms[d.reward_term] = (min(cap, max(weight, round(d.ci_low or 0.0, 4))), codes + [d.code])
    return terms


def shift_toward(
    weights: dict[str, float], decisions: list[CodeDecision], strength: float = 0.5
) -> tuple[dict[str, float], dict[str, float]]:
    """Weights and α bias moved toward the tiers the used codes target. Each code adds
    `strength × ci_low` (the share's conservative end, not its point estimate), split over its
    tiers; weights are renormalised to sum 1, and α bias is 1 + the same amount."""
    bonus = {t: 0.0 for t in TIERS}
    for d in decisions:
        if d.used and d.tiers:
            for tier in d.tiers:
                bonus[tier] += strength * (d.ci_low or 0.0) / len(d.tiers)
    raw = {t: weights.get(t, 0.0) * (1 + bonus[t]) for t in TIERS}
    total = sum(raw.values())
    shifted = {t: round(raw[t] / total, 4) for t in TIERS}
    return shifted, {t: round(1 + bonus[t], 4) for t in TIERS}
