"""The verification term's A/B on SmolLM2-135M-Instruct in terminal episodes (issue #46): the share
of rollouts that finish without a check after their last edit, with the term off and on at the
same budget.

    python bench/verification_term_smollm2.py --workdir /tmp/verification-term [--steps 16] [--weight 0.3]

Both arms start from the same warmed SmolLM2 (the tool-format warm-up, cached), the same
`plan --tasks builtin` plan, seed and number of steps; they differ only in the reward section:
the plan's outcome reward alone, or with `verification_reward` at `--weight`. They train at once,
one core each, so a stopped run leaves both at the same step. Each arm's episodes land in its own
store, coded by the environment; per arm and half of the run (steps before and after the middle:
"round 1" and "round 2"), the script prints the rollouts, those that changed a file, and those that
finished without a check after their last change (the environment's `skipped_verification`),
as a share of all rollouts with a task-clustered 95% interval, then the off − on difference in
each round with its interval (tasks resampled; both arms train on the same tasks in the same
order). `--report` reads finished arms again without training.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ARMS = ("off", "on")


def run_arm(arm: str, work: Path, steps: int, weight: float, model: str) -> None:
    import torch

    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store
    from curriculab.planner.tasks import build_task_plan, export_task_plan
    from curriculab.training.agentic import train_agent
    from curriculab.training.terminal.suite import task_directories

    torch.set_num_threads(1)
    folder = work / arm
    folder.mkdir(parents=True, exist_ok=True)
    tasks = task_directories("builtin")
    db = folder / "store.duckdb"
    with Store(db) as store:
        ingest(store, [str(p) for p in tasks.values()], "tasks")
        made = build_task_plan(store, "verification-ab", "builtin", sorted(tasks))
    if "verification_reward" in made.reward_functions:
        raise SystemExit("the plan already pays for verification: the off arm would not be off")
    if arm == "on":
        made = made.model_copy(
            update={
                "reward_functions": [*made.reward_functions, "verification_reward"],
                "reward_weights": [*made.reward_weights, weight],
            }
        )
    plan = export_task_plan(made, folder / "plan.yaml")
    result = train_agent(
        plan,
        model,
        max_steps=steps,
        output_dir=folder / "out",
        db_path=str(db),
        save_steps=max(1, steps // 2),
        force_cpu=True,
        announce=lambda line: print(f"[{arm}] {line}", file=sys.stderr, flush=True),
    )
    (folder / "result.json").write_text(
        json.dumps(
            {"run_id": result.run_id, "steps": result.steps, "episodes": result.rollouts, "seconds": result.seconds}
        )
    )


def episodes(work: Path, arm: str) -> list[dict]:
    """Each stored episode of the arm: task, step, whether it changed a file, whether it finished unchecked."""
    from curriculab.analysis.store import Store
    from curriculab.training.terminal.episode_log import trial_step

    run_id = json.loads((work / arm / "result.json").read_text())["run_id"]
    with Store(work / arm / "store.duckdb", read_only=True) as store:
        rows = store.query(
            """
            SELECT t.trajectory_id, t.task_id, s.status
            FROM trajectories t JOIN coding_status s USING (trajectory_id)
            WHERE starts_with(t.trajectory_id, ?) AND s.coder = 'environment' AND s.code = 'skipped_verification'
            """,
            [run_id + "-"],
        ).rows
    return [
        {
            "task": task,
            "step": trial_step(run_id, trajectory),
            "edited": status != "not_applicable",
            "unchecked": status == "present",
        }
        for trajectory, task, status in rows
    ]


def report(work: Path) -> dict:
    from curriculab.analysis.stats import cluster_bootstrap, cluster_bootstrap_difference

    by_arm = {arm: episodes(work, arm) for arm in ARMS}
    steps = sorted({e["step"] for rows in by_arm.values() for e in rows})
    middle = steps[len(steps) // 2] if steps else 0
    tasks = sorted({e["task"] for rows in by_arm.values() for e in rows})
    out: dict = {"rounds": {}, "difference_off_minus_on": {}}
    counts: dict = {}
    for half, in_half in (("round 1", lambda s: s < middle), ("round 2", lambda s: s >= middle)):
        for arm, rows in by_arm.items():
            chosen = [e for e in rows if in_half(e["step"])]
            per_task = defaultdict(lambda: [0, 0])
            for e in chosen:
                per_task[e["task"]][0] += e["unchecked"]
                per_task[e["task"]][1] += 1
            k = [per_task[t][0] for t in tasks]
            n = [per_task[t][1] for t in tasks]
            counts[half, arm] = (k, n)
            low, high = cluster_bootstrap(k, n)
            out["rounds"].setdefault(half, {})[arm] = {
                "rollouts": len(chosen),
                "edited": sum(e["edited"] for e in chosen),
                "unchecked_after_last_edit": sum(k),
                "share": round(sum(k) / len(chosen), 3) if chosen else None,
                "ci95": [round(low, 3), round(high, 3)] if low is not None else None,
            }
        (k_off, n_off), (k_on, n_on) = counts[half, "off"], counts[half, "on"]
        low, high = cluster_bootstrap_difference(k_off, n_off, k_on, n_on)
        out["difference_off_minus_on"][half] = {
            "difference": round(sum(k_off) / sum(n_off) - sum(k_on) / sum(n_on), 3)
            if sum(n_off) and sum(n_on)
            else None,
            "ci95": [round(low, 3), round(high, 3)] if low is not None else None,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--weight", type=float, default=0.3)
    parser.add_argument("--model", default="smollm2", help="smollm2, or tiny for a dry run in seconds.")
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)  # one arm, as the two children run
    parser.add_argument("--report", action="store_true", help="Report finished arms without training.")
    args = parser.parse_args()
    if args.arm:
        run_arm(args.arm, args.workdir, args.steps, args.weight, args.model)
        return
    if not args.report:
        if args.workdir.exists() and any(args.workdir.iterdir()):
            raise SystemExit(f"--workdir {args.workdir} holds files: name a new or empty folder")
        environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        command = [sys.executable, __file__, "--workdir", str(args.workdir), "--steps", str(args.steps)]
        command += ["--weight", str(args.weight), "--model", args.model]
        children = [subprocess.Popen([*command, "--arm", arm], env=environment) for arm in ARMS]
        if any([child.wait() for child in children]):  # both waited for, even when one fails
            raise SystemExit("an arm failed: its messages are above")
    print(json.dumps(report(args.workdir), indent=1))


if __name__ == "__main__":
    main()
