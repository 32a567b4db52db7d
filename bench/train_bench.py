"""Where a GRPO step's time goes on CPU with the tiny model: sandboxed reward scoring and store
writes against the whole step, measured in one run.

    python bench/train_bench.py [--steps 6] [--batch 64]

Each step generates `--batch` completions (8 prompts × 8) of the built-in set; the reward
functions (sandbox scoring) and the rollout/metric writes (JSONL shards, ingest at each
checkpoint, here every 2 steps) are timed inside `curriculab train`'s own code. Goals: reward
under 25% of the step's wall time; store writes under 5% of training wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    import yaml

    from curriculab.analysis.store import Store
    from curriculab.planner import plan as planning
    from curriculab.training.grpo import train
    from curriculab.training.problems import builtin_problems

    work = Path(tempfile.mkdtemp(prefix="curriculab-train-bench-"))
    problems = builtin_problems()
    with Store(work / "store.duckdb") as store:
        made = planning.build_plan(store, "bench", problems, "builtin", prior="weak")
    path = planning.export(made, work / "plan.yaml", problems)
    config = yaml.safe_load(path.read_text())
    config["grpo"].update(num_generations=8, per_device_train_batch_size=args.batch)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = train(path, "tiny", max_steps=args.steps, output_dir=work / "out", db_path=str(work / "store.duckdb"),
                   save_steps=2)
    print(json.dumps({"steps": result.steps, "completions_per_step": args.batch, "rollouts": result.rollouts,
                      "train_s": round(result.seconds, 2), "reward_s": round(result.reward_seconds, 2),
                      "store_s": round(result.store_seconds, 2),
                      "reward_share_of_step": round(result.reward_seconds / result.seconds, 3),
                      "store_share_of_training": round(result.store_seconds / result.seconds, 3),
                      "goals": {"reward_under_25pct": result.reward_seconds / result.seconds < 0.25,
                                "store_under_5pct": result.store_seconds / result.seconds < 0.05}}, indent=2))


if __name__ == "__main__":
    main()
