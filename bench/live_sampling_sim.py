"""Live task sampling against TRL's static RepeatSampler, on simulated learners, same seeds.

    python bench/live_sampling_sim.py [--seeds 30] [--steps 300]

Three arms, same seeds: `static`, a uniform draw without replacement per chunk (what
`RepeatSampler` does within an epoch); `live`, the real `training.sampling.LiveRepeatSampler`
fed by `ProblemStats` exactly as the reward function feeds it; `oracle`, a draw weighted by the
true chance that a group is informative, 1 − pᴳ − (1 − p)ᴳ (unknowable in training: the bound). Assumptions (a model of GRPO's signal, not of any
real model):
- 40 training problems and 40 held-out ones; a problem's pass probability is
  sigmoid(θ + u_i − d_i), θ the learner's general skill, u_i what it learned on that problem;
  difficulties d are drawn so that at the start about 60% of groups of 8 are all-same, as the
  H200 SmolLM2 runs measured (most of them all-0: problems the model never solves);
- a step draws 8 prompts × G = 8 completions (64, as on the H200); each completion passes with
  the problem's probability; a group carries gradient only when its completions differ, and then
  moves θ by η_general and u_i by η_local (GRPO learns from informative groups only);
- held-out pass rate = mean sigmoid(θ − d_j) over the held-out problems; target +0.15 over start.
Prints one JSON object: per arm, the mean share of all-same groups and the median steps to the
target (capped at --steps), and their ratios.
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

from curriculab.training.sampling import LiveRepeatSampler, LiveSamplingSettings, ProblemStats  # noqa: E402

G, PROMPTS, PROBLEMS, ETA_GENERAL, ETA_LOCAL, GAIN = 8, 8, 40, 0.004, 0.08, 0.15


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def difficulties(rng: random.Random, n: int) -> list[float]:
    # a mix: half far out of reach at the start, a third in reach, the rest nearly solved
    return [
        rng.gauss(4.0, 1.0) if k % 2 == 0 else rng.gauss(0.0, 1.0) if k % 6 in (1, 3) else rng.gauss(-3.0, 0.7)
        for k in range(n)
    ]


def run(seed: int, arm: str, steps: int) -> dict:
    rng = random.Random(seed)
    train_d, held_d = difficulties(rng, PROBLEMS), difficulties(rng, PROBLEMS)
    ids = [f"p{k}" for k in range(PROBLEMS)]
    theta, local = 0.0, [0.0] * PROBLEMS
    stats = ProblemStats(G, LiveSamplingSettings())
    start = statistics.mean(sigmoid(theta - d) for d in held_d)
    reached, same, groups = None, 0, 0
    draw_rng = random.Random(seed + 1)

    sampler = LiveRepeatSampler(ids, stats, mini_repeat_count=1, batch_size=PROMPTS, seed=seed)

    def chunks():
        while True:
            if arm == "live":
                order = iter(sampler)  # a new epoch: the sampler reseeds with seed + epoch
                for _ in range(len(ids) // PROMPTS):
                    yield [next(order) for _ in range(PROMPTS)]
            elif arm == "oracle":
                p = [sigmoid(theta + local[i] - train_d[i]) for i in range(PROBLEMS)]
                yield draw_rng.choices(range(PROBLEMS), weights=[1 - q**G - (1 - q) ** G + 1e-12 for q in p], k=PROMPTS)
            else:
                order = list(range(PROBLEMS))
                draw_rng.shuffle(order)
                for k in range(0, PROBLEMS - PROMPTS + 1, PROMPTS):
                    yield order[k : k + PROMPTS]

    source = chunks()
    for step in range(1, steps + 1):
        chunk = next(source)
        problem_ids, rewards = [], []
        for index in chunk:
            p = sigmoid(theta + local[index] - train_d[index])
            outcomes = [float(rng.random() < p) for _ in range(G)]
            problem_ids += [ids[index]] * G
            rewards += outcomes
            groups += 1
            if min(outcomes) == max(outcomes):
                same += 1
            else:
                theta += ETA_GENERAL
                local[index] += ETA_LOCAL
        stats.observe(problem_ids, rewards)
        if reached is None and statistics.mean(sigmoid(theta - d) for d in held_d) >= start + GAIN:
            reached = step
    return {"all_same": same / groups, "steps": reached or steps, "start": start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    arms = {}
    for name in ("static", "live", "oracle"):
        results = [run(seed, name, args.steps) for seed in range(args.seeds)]
        arms[name] = {
            "all_same_share": round(statistics.mean(r["all_same"] for r in results), 3),
            "median_steps_to_target": statistics.median(r["steps"] for r in results),
            "held_out_start": round(statistics.mean(r["start"] for r in results), 3),
        }
    print(
        json.dumps(
            {
                "seeds": args.seeds,
                "max_steps": args.steps,
                "gain_target": GAIN,
                "arms": arms,
                "all_same_ratio_live_over_static": round(
                    arms["live"]["all_same_share"] / arms["static"]["all_same_share"], 3
                ),
                "all_same_ratio_oracle_over_static": round(
                    arms["oracle"]["all_same_share"] / arms["static"]["all_same_share"], 3
                ),
                "steps_ratio_live_over_static": round(
                    arms["live"]["median_steps_to_target"] / arms["static"]["median_steps_to_target"], 3
                ),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
