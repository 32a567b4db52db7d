"""Simulated learners under each curriculum: steps to reach a target, over many seeds.

    python bench/curriculum_sim.py [--seeds 30] [--max-steps 3000]

Assumptions (a model of GRPO's signal, not of any real model):
- the learner has a skill s_l per tier l; its pass rate is p_l = sigmoid(s_l − d_l) with tier
  difficulties d = (−1, 0, 1, 2) for basic, intermediate, complex, edge;
- each step draws a batch of 16 problems × G = 8 completions; a tier's observed pass rate is the
  binomial share of passes (what `pass_rate/<tier>` logs);
- a step's learning on tier l is η · g_l · v_l, where g_l is the reward's gradient weight on l
  (α_l w_l for TAROT schedules; 1/4 each for Avg-reward; for Pass@All the chance that the other
  tiers all pass, since a tier's pass moves the reward only then) and v_l is the share of the
  step's 4 sampled GRPO groups (of G) on l whose completions differ — an all-same group carries
  no gradient (expected share 1 − p_lᴳ − (1 − p_l)ᴳ); it is scaled by p_{l−1}, the pass rate of
  the tier below (prerequisites: a complex skill is learned on top of an intermediate one — the
  assumption behind any easy-to-hard curriculum); plus transfer: half of it reaches each adjacent
  tier;
- target: mean pass rate over the four tiers ≥ 0.9 (a benchmark score, as TAROT evaluates);
  steps-to-target, capped at --max-steps.
A weak learner starts at p ≈ (0.60, 0.25, 0.04, 0.005) (skill − difficulty = 0.4, −1.1, −3.2, −5.3), a
strong one at p ≈ (0.97, 0.92, 0.73, 0.50) (3.5, 2.5, 1, 0). Fixed schedules run TAROT's phases
over a horizon of 300 steps (the fraction of training done), all tiers active after it. The
dynamic schedule is `planner.dynamic.next_allocation` with its default settings, fed the observed
per-tier rates every step, with uniform weights.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curriculab.planner.dynamic import DynamicState, next_allocation  # noqa: E402
from curriculab.planner.portfolio import TierCurriculum  # noqa: E402

TIERS = ("basic", "intermediate", "complex", "edge")
DIFFICULTY = (-1.0, 0.0, 1.0, 2.0)
LEARNERS = {"weak": (0.4, -1.1, -3.2, -5.3), "strong": (3.5, 2.5, 1.0, 0.0)}
G, BATCH, GROUPS, ETA, TRANSFER, HORIZON, TARGET = 8, 16, 4, 0.02, 0.5, 300, 0.9


def pass_rates(skill: list[float]) -> list[float]:
    return [1 / (1 + math.exp(-(s - d))) for s, d in zip(skill, DIFFICULTY)]


def gradient_weights(
    strategy: str, step: int, p: list[float], state: DynamicState | None, curricula: dict[str, TierCurriculum]
) -> tuple[list[float], DynamicState | None]:
    if strategy == "avg_reward":
        return [0.25] * 4, state
    if strategy == "pass_all":
        # a tier's pass moves the reward only when the others all pass; GRPO normalises advantages per group, so
        # the weights are shares, times the chance that a group's Pass@All rewards differ at all
        raw = [math.prod(p[k] for k in range(4) if k != tier) for tier in range(4)]
        q = math.prod(p)  # a completion's chance to score 1
        total = sum(raw)
        return [r / total * (1 - q**G - (1 - q) ** G) if total else 0.0 for r in raw], state
    if strategy == "dynamic":
        alpha = state.allocation()
        return [alpha[t] * 0.25 * 4 for t in TIERS], state  # uniform w; α sums to 1
    curriculum = curricula[strategy]
    alpha = curriculum.allocation(min(step / HORIZON, 1.0))
    return [alpha[t] * curriculum.weights[t] for t in TIERS], state


def run(strategy: str, learner: str, seed: int, max_steps: int, curricula: dict[str, TierCurriculum]) -> int:
    rng = random.Random(seed)
    skill = [a + d for a, d in zip(LEARNERS[learner], DIFFICULTY)]
    state = DynamicState() if strategy == "dynamic" else None
    for step in range(max_steps):
        p = pass_rates(skill)
        observed = [sum(rng.random() < q for _ in range(BATCH * G // 4)) / (BATCH * G // 4) for q in p]
        if sum(p) / 4 >= TARGET:
            return step
        if state is not None:
            state = next_allocation(state, dict(zip(TIERS, observed)))
        g, state = gradient_weights(strategy, step, p, state, curricula)
        # the share of this step's groups on tier tier whose completions differ (the rest carry no gradient)
        mixed = [
            sum(0 < sum(rng.random() < p[tier] for _ in range(G)) < G for _ in range(GROUPS)) / GROUPS
            for tier in range(4)
        ]
        # a tier's skill builds on the tier below it: learning there is scaled by how well that one is mastered
        gain = [ETA * g[tier] * mixed[tier] * 4 * (p[tier - 1] if tier else 1.0) for tier in range(4)]
        for tier in range(4):
            skill[tier] += gain[tier] + TRANSFER * sum(gain[k] for k in (tier - 1, tier + 1) if 0 <= k < 4)
    return max_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--max-steps", type=int, default=3000)
    args = parser.parse_args()
    curricula = {
        "forward/basic-intermediate": TierCurriculum("forward", "basic-intermediate"),
        "forward/uniform": TierCurriculum("forward", "uniform"),
        "reversed/complex-edge": TierCurriculum("reversed", "complex-edge"),
        "reversed/uniform": TierCurriculum("reversed", "uniform"),
        "static-all/uniform": TierCurriculum("all", "uniform"),
    }
    strategies = [*curricula, "avg_reward", "pass_all", "dynamic"]
    results = {}
    for learner in LEARNERS:
        for strategy in strategies:
            steps = [run(strategy, learner, seed, args.max_steps, curricula) for seed in range(args.seeds)]
            mean = statistics.mean(steps)
            half = 1.96 * statistics.stdev(steps) / math.sqrt(len(steps)) if len(steps) > 1 else 0.0
            results.setdefault(learner, {})[strategy] = {
                "mean_steps": round(mean, 1),
                "ci95": [round(mean - half, 1), round(mean + half, 1)],
                "capped": sum(s >= args.max_steps for s in steps),
            }
            print(f"{learner:6} {strategy:28} {mean:8.1f} ± {half:6.1f}", flush=True)
    fixed = [s for s in strategies if s != "dynamic"]
    summary = {}
    for learner, table in results.items():
        best = min(fixed, key=lambda s: table[s]["mean_steps"])
        summary[learner] = {
            "best_fixed": best,
            "best_fixed_steps": table[best]["mean_steps"],
            "dynamic_steps": table["dynamic"]["mean_steps"],
            "dynamic_over_best_fixed": round(table["dynamic"]["mean_steps"] / table[best]["mean_steps"], 3),
        }
    weak, strong = results["weak"], results["strong"]
    print(
        json.dumps(
            {
                "seeds": args.seeds,
                "max_steps": args.max_steps,
                "results": results,
                "summary": summary,
                "tarot_finding_reproduced": {
                    "weak_forward_beats_reversed": weak["forward/basic-intermediate"]["mean_steps"]
                    < weak["reversed/complex-edge"]["mean_steps"],
                    "strong_reversed_beats_forward": strong["reversed/complex-edge"]["mean_steps"]
                    < strong["forward/basic-intermediate"]["mean_steps"],
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
