"""Where a GRPO step's time goes on CPU with the tiny model: sandboxed reward scoring and store
writes against the whole step, measured in one run.

    python bench/train_bench.py [--steps 6] [--batch 64]

Each step generates `--batch` completions (8 prompts × 8) of the built-in set. The same run is
made with the store (rollout shards, ingest at each checkpoint every `--save-steps`, beside
training, and at the end; metrics) and without it (`db_path=None`), alternating, in one process;
the reward functions' time (sandbox scoring) is measured inside the run. Goals: reward under 25%
of the step's wall time; store writes adding under 5% to training wall time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save-steps", type=int, default=5, help="Checkpoint (and ingest) every N steps.")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2, help="Alternating runs of each side (medians compared).")
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

    def run(name: str, store: bool):
        db = work / f"{name}.duckdb"
        if store:
            shutil.copy(work / "store.duckdb", db)
        return train(
            path,
            "tiny",
            max_steps=args.steps,
            output_dir=work / name,
            db_path=str(db) if store else None,
            save_steps=args.save_steps,
        )

    run("warmup", True)  # imports and the tiny model, once
    with_store, without = [], []
    for k in range(args.rounds):  # alternate, so drift hits both sides
        without.append(run(f"plain{k}", False))
        with_store.append(run(f"store{k}", True))
    median = lambda values: statistics.median(values)  # noqa: E731
    plain_s = median([r.seconds for r in without])
    store_s = median([r.seconds for r in with_store])
    reward_share = median([r.reward_seconds / r.seconds for r in with_store])
    blocking = median([r.store_seconds / r.seconds for r in with_store])
    print(
        json.dumps(
            {
                "steps": args.steps,
                "save_steps": args.save_steps,
                "completions_per_step": args.batch,
                "rounds": args.rounds,
                "rollouts_per_run": with_store[0].rollouts,
                "train_s_without_store": round(plain_s, 2),
                "train_s_with_store": round(store_s, 2),
                "store_overhead_ratio": round(store_s / plain_s - 1, 3),
                "store_blocking_share": round(blocking, 3),
                "reward_share_of_step": round(reward_share, 3),
                "goals": {"reward_under_25pct": reward_share < 0.25, "store_under_5pct": store_s / plain_s - 1 < 0.05},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
