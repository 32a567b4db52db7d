"""A real GRPO run on CPU: SmolLM2-135M-Instruct on the easy tiers of the built-in set, once with
the plan's schedule and once with the flat Avg-reward baseline, same seed and step budget.

    python bench/smollm2_run.py --workdir /tmp/smollm2-run [--steps 50] [--samples 4]

- Problems: the built-in set with only its basic and intermediate tests, split by id into 30
  training and 12 held-out problems.
- Plans: `curriculab plan` for the model with `--capability weak` (the store has no rollouts of it):
  TAROT's choice for a weak model (forward, basic/intermediate weights), and the same with
  `--strategy avg_reward`.
- Before and after: per-tier pass rates on the held-out problems, `--samples` completions each
  (temperature 0.7, the model's chat template), scored in the sandbox.
- Curves: per-tier pass rate and reward per step, from `training_metrics`.
Prints one JSON object; `bench/RESULTS.md` records it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EASY = ("basic", "intermediate")


def split(problems):
    ranked = sorted(problems, key=lambda p: hashlib.sha256(p.problem_id.encode()).hexdigest())
    return ranked[:30], ranked[30:]


def evaluate(model_dir: str, problems, samples: int, seed: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.models import CODE_INSTRUCTION
    from curriculab.training.rewards import score_completions

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    network = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    network.eval()
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": CODE_INSTRUCTION + p.prompt}], tokenize=False, add_generation_prompt=True
        )
        for p in problems
    ]
    completions = []
    for start in range(0, len(texts), 4):
        batch = tokenizer(texts[start : start + 4], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = network.generate(
                **batch,
                do_sample=True,
                temperature=0.7,
                top_p=0.95,
                max_new_tokens=160,
                num_return_sequences=samples,
                pad_token_id=tokenizer.pad_token_id,
            )
        decoded = tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
        for k, text in enumerate(decoded):
            problem = problems[start + k // samples]
            completions.append(
                {
                    "problem_id": problem.problem_id,
                    "completion_id": f"{problem.problem_id}#{k % samples}",
                    "completion": text,
                }
            )
    scored = score_completions(problems, completions, TierCurriculum("all", "uniform"))
    rates = {t: [r["pass_rate"][t] for r in scored if r["pass_rate"][t] is not None] for t in EASY}
    return {
        "pass_rate": {t: round(sum(v) / len(v), 3) if v else None for t, v in rates.items()},
        "all_tests_passed": round(sum(r["reward"] == 1.0 for r in scored) / len(scored), 3),
        "completions": len(scored),
    }


def curves(db: Path, run_id: str) -> dict:
    from curriculab.analysis import queries
    from curriculab.analysis.store import Store

    with Store(db, read_only=True) as store:
        frame = queries.training_curves(store, run_id=run_id)
    wanted = frame[frame["name"].isin(["reward", *(f"pass_rate/{t}" for t in EASY), *(f"alpha/{t}" for t in EASY)])]
    return {name: [round(v, 3) for v in part.sort_values("step")["value"]] for name, part in wanted.groupby("name")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--samples", type=int, default=4)
    args = parser.parse_args()

    import yaml

    from curriculab.analysis.store import Store
    from curriculab.planner import plan as planning
    from curriculab.training.callback import summary_line
    from curriculab.training.grpo import train
    from curriculab.training.models import fetch_smollm2, resolve_model
    from curriculab.training.problems import builtin_problems, save_problems

    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    fetch_smollm2()
    base_dir, _, base_name = resolve_model("smollm2")
    easy = [dataclasses.replace(p, tests=[t for t in p.tests if t.tier in EASY]) for p in builtin_problems()]
    train_set, held_out = split(easy)
    problems_file = save_problems(easy, args.workdir / "easy.jsonl")
    db = args.workdir / "store.duckdb"
    with Store(db):
        pass
    result = {
        "model": base_name,
        "steps": args.steps,
        "train_problems": len(train_set),
        "held_out_problems": len(held_out),
        "samples": args.samples,
        "before": evaluate(base_dir, held_out, args.samples, seed=0),
    }
    print("before", result["before"], flush=True)
    for strategy in ("tarot", "avg_reward"):
        with Store(db, read_only=True) as store:
            made = planning.build_plan(store, base_name, train_set, str(problems_file), prior="weak", strategy=strategy)
        path = planning.export(made, args.workdir / strategy / "plan.yaml", train_set)
        config = yaml.safe_load(path.read_text())
        config["grpo"].update(
            num_generations=4, per_device_train_batch_size=4, max_completion_length=160, learning_rate=5e-6, seed=0
        )
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        started = time.perf_counter()
        run = train(
            path,
            "smollm2",
            max_steps=args.steps,
            output_dir=args.workdir / strategy / "out",
            db_path=str(db),
            save_steps=args.steps,
            summary=lambda step, logs: print(summary_line(step, logs), flush=True),
        )
        final = args.workdir / strategy / "out" / f"checkpoint-{args.steps}"
        result[strategy] = {
            "schedule": made.schedule,
            "weights": made.weights,
            "wall_s": round(time.perf_counter() - started, 1),
            "after": evaluate(str(final), held_out, args.samples, seed=0),
            "curves": curves(db, run.run_id),
            "store_write_share": round(run.store_seconds / run.seconds, 4),
        }
        print(strategy, result[strategy]["after"], flush=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
