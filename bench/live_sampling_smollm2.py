"""Live task sampling against TRL's static order on a real model: SmolLM2-135M-Instruct on CPU,
the same plan, seed and step budget, once with each sampler.

    python bench/live_sampling_smollm2.py --workdir /tmp/live-smollm2 [--steps 15] [--generations 8] [--prompts 2]

- Problems: the built-in set with only its basic and intermediate tests (as bench/smollm2_run.py),
  the 30 training problems of its split; the plan is `curriculab plan` for the model with a weak
  prior, its reward the plan's (tarot).
- Per arm: the share of GRPO groups whose rewards were all equal — TRL's `frac_reward_zero_std`,
  averaged over logged steps, and the same share counted from the reward's own results — and
  the pass rate of the step's completions (mean of the logged per-tier pass rates).
Prints one JSON object; `bench/RESULTS.md` records it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from smollm2_run import EASY, split  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument(
        "--prompts", type=int, default=2, help="Prompts per step (each with --generations completions)."
    )
    args = parser.parse_args()

    from curriculab.analysis import queries
    from curriculab.analysis.store import Store
    from curriculab.planner import plan as planning
    from curriculab.training.callback import summary_line
    from curriculab.training.grpo import train
    from curriculab.training.models import fetch_smollm2, resolve_model
    from curriculab.training.problems import builtin_problems, save_problems

    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    fetch_smollm2()
    _, _, base_name = resolve_model("smollm2")
    easy = [dataclasses.replace(p, tests=[t for t in p.tests if t.tier in EASY]) for p in builtin_problems()]
    train_set, _ = split(easy)
    problems_file = save_problems(easy, args.workdir / "easy.jsonl")
    db = args.workdir / "store.duckdb"
    with Store(db):
        pass
    with Store(db, read_only=True) as store:
        made = planning.build_plan(store, base_name, train_set, str(problems_file), prior="weak")
    path = planning.export(made, args.workdir / "plan.yaml", train_set)
    result = {
        "model": base_name,
        "steps": args.steps,
        "generations": args.generations,
        "prompts_per_step": args.prompts,
        "train_problems": len(train_set),
        "arms": {},
    }
    for arm, live in (("static", False), ("live", True)):
        config = planning.training_config(made, path.name)
        config.base_dir = path.parent
        config.grpo.update(
            num_generations=args.generations,
            per_device_train_batch_size=args.generations * args.prompts,
            max_completion_length=160,
            learning_rate=5e-6,
            seed=0,
            temperature=1.0,
        )
        started = time.perf_counter()
        run = train(
            config,
            "smollm2",
            max_steps=args.steps,
            output_dir=args.workdir / arm,
            db_path=str(db),
            save_steps=args.steps,
            live_sampling=live,
            model_label=f"{base_name}@{arm}",
            summary=lambda step, logs, arm=arm: print(f"{arm:6s} " + summary_line(step, logs), flush=True),
        )
        with Store(db, read_only=True) as store:
            curves = queries.training_curves(store, run_id=run.run_id)
        zero_std = curves[curves["name"] == "frac_reward_zero_std"]["value"].tolist()
        rates = curves[curves["name"].str.startswith("pass_rate/")].groupby("step")["value"].mean().tolist()
        result["arms"][arm] = {
            "frac_reward_zero_std_mean": round(statistics.mean(zero_std), 3),
            "all_same_share_counted": round(run.all_same_share, 3),
            "pass_rate_first_half": round(statistics.mean(rates[: len(rates) // 2]), 3),
            "pass_rate_second_half": round(statistics.mean(rates[len(rates) // 2 :]), 3),
            "wall_s": round(time.perf_counter() - started, 1),
        }
        print(arm, result["arms"][arm], flush=True)
    static, live = result["arms"]["static"], result["arms"]["live"]
    result["zero_std_ratio_live_over_static"] = round(
        live["frac_reward_zero_std_mean"] / max(static["frac_reward_zero_std_mean"], 1e-9), 3
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
