"""The closed loop on a real model: `curriculab loop` with SmolLM2-135M-Instruct on CPU, 2–3 short
rounds, to show that round 2's plan acts on round 1's rollout failure codes.

    python bench/smollm2_loop.py --workdir /tmp/smollm2-loop [--rounds 2] [--steps 4]

Round 1 plans for the model from a weak prior over the built-in problems; each round trains a few
GRPO steps (8 completions of at most 160 tokens a step), its rollouts are coded by the verifier
as they land, and the next round plans from them. Prints every round's line as the loop does,
then one JSON object per round: its plan's reward section and weights, the reasons that cite
the previous round's codes, and its rollouts' failure distribution.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    from curriculab.analysis.store import Store
    from curriculab.loop import run_loop
    from curriculab.training.models import fetch_smollm2
    from curriculab.training.problems import builtin_problems

    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    fetch_smollm2()
    db = args.workdir / "store.duckdb"
    with Store(db):
        pass
    history = run_loop(
        str(db),
        "SmolLM2-135M-Instruct",
        args.rounds,
        args.steps,
        args.workdir / "loop",
        builtin_problems(),
        "builtin",
        weights="smollm2",
        prior="weak",
        say=lambda line: print(line, flush=True),
        grpo_overrides={"max_completion_length": 160, "learning_rate": 5e-6, "temperature": 1.0},
    )
    print(
        json.dumps(
            [
                {
                    "round": r.round,
                    "plan_id": r.plan_id,
                    "schedule": r.schedule,
                    "weights": r.weights,
                    "changes": r.changes,
                    "code_effects": r.code_effects,
                    "rollouts": r.rollouts,
                    "rollout_codes": [
                        {k: (round(v, 3) if isinstance(v, float) else v) for k, v in c.items()} for c in r.rollout_codes
                    ],
                    "all_same_share": r.all_same_share,
                }
                for r in history
            ],
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
