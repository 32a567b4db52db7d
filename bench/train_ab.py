"""A short GRPO run as a process, this checkout against an earlier revision, alternated.

    python bench/train_ab.py --baseline 414c0da [--steps 6] [--pairs 3] [--workdir /tmp/train-ab]
    python bench/train_ab.py --baseline 6c0761e --tasks builtin [--steps 2]    # an agentic run

With `--tasks SUITE` the plan is a task plan (`plan --tasks SUITE` for tiny-agent) and each side runs
agentic GRPO in terminal episodes; the warm-up before both sides' first timed run fills the shared
cache of warmed models, so neither side's timed runs include the warm-up.

One store and one plan (the demo's corpus, its weakest model's plan) are made once; each side then
runs the real `curriculab train --model tiny --max-steps N` into a fresh output folder and a fresh
copy of the store (rollouts ingested and coded at its end), the baseline imported from a git
worktree of its revision (`bench/ab.py`), the order swapped every pair. The whole process is timed:
imports, setup, the steps, the store. Prints each pair's seconds and the median ratio (this
checkout / baseline).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ab import alternate, baseline_site, run_curriculab  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with.")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/train-ab"))
    parser.add_argument("--tasks", metavar="SUITE", help="Plan agentic training on this task suite instead.")
    args = parser.parse_args()
    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store = work / "store.duckdb"
    run_curriculab(["simulate", str(work / "sim"), "--tasks", "24", "--attempts", "2"], None, work)
    run_curriculab(["--db", str(store), "ingest", str(work / "sim")], None, work, ok=(0, 1))
    run_curriculab(["--db", str(store), "code", "--coder", "rules"], None, work)
    planned_for = ["--model", "tiny-agent", "--tasks", args.tasks] if args.tasks else ["--model", "atlas-7b-coder"]
    run_curriculab(["--db", str(store), "plan", *planned_for, "-o", str(work / "plan.yaml")], None, work)
    runs = iter(range(10_000))

    with baseline_site(args.baseline, work / "baseline") as site:

        def train(side: str | None) -> float:
            k = next(runs)
            db = work / f"run-{k}.duckdb"
            shutil.copy(store, db)
            seconds = run_curriculab(
                ["--db", str(db), "train", "--config", str(work / "plan.yaml"), "--model", "tiny"]
                + ["--max-steps", str(args.steps), "--output-dir", str(work / f"out-{k}")],
                side,
                work,
            )
            db.unlink()
            shutil.rmtree(work / f"out-{k}", ignore_errors=True)
            return seconds

        train(None), train(site)  # warm both
        alternate(args.pairs, train, site, {"baseline": args.baseline, "steps": args.steps, "tasks": args.tasks})


if __name__ == "__main__":
    main()
