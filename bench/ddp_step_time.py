"""One training process against two (DDP over gloo on CPU) on the same plan: alternated runs, median step time.

    python bench/ddp_step_time.py [--steps 6] [--pairs 3] [--workdir /tmp/ddp-bench]

Builds a store from the Harbor sample and a plan for one of its models (once), then alternates
`curriculab train` in one process and `accelerate launch --multi_gpu --num_processes 2` of the same
command, the tiny model, static sampling, `generate`. Each run's step times come from its
`training_metrics` (`step_time`, the first step left out as warm-up). Two processes score twice the
completions a step (each rank its own batch), so the figure that compares is completions per second;
both are printed, with their median ratios.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "curriculab.cli"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(processes: int, db: Path, plan: Path, out: Path, steps: int) -> dict:
    train = [
        "-m",
        "curriculab.cli",
        "train",
        "--db",
        str(db),
        "--config",
        str(plan),
        "--model",
        "tiny",
        "--max-steps",
        str(steps),
        "--output-dir",
        str(out),
        "--static-sampling",
        "--generation-backend",
        "generate",
    ]
    launch = (
        [
            str(Path(sys.executable).with_name("accelerate")),
            "launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--main_process_port",
            str(_free_port()),
        ]
        if processes == 2
        else [sys.executable]
    )
    done = subprocess.run(launch + train, capture_output=True, text=True, cwd=ROOT, timeout=900)
    if done.returncode != 0:
        sys.exit(f"{processes} process(es) failed:\n{done.stderr[-3000:]}")
    run_id = next(line.split()[1].rstrip(":") for line in done.stdout.splitlines() if line.startswith("run grpo-"))
    query = (
        f"select value from training_metrics where run_id = '{run_id}' and name = 'step_time' and step > 1 "
        "order by step"
    )
    times = [
        r["value"]
        for r in json.loads(
            subprocess.run(
                CLI + ["--db", str(db), "query", "--json", query], capture_output=True, text=True, check=True
            ).stdout
        )
    ]
    completions = 8 * processes
    return {"step_s": statistics.median(times), "completions_per_s": completions / statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ddp-bench"))
    args = parser.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    db, plan = work / "store.duckdb", work / "plan.yaml"
    if not plan.exists():
        for step in (
            ["ingest", str(ROOT / "tests" / "fixtures" / "harbor")],
            ["code", "--coder", "rules"],
            ["plan", "--model", "gpt-5-mini", "-o", str(plan)],
        ):
            subprocess.run(CLI + ["--db", str(db), *step], check=True, capture_output=True, cwd=ROOT)
    results: dict[int, list[dict]] = {1: [], 2: []}
    for pair in range(args.pairs):
        for processes in (1, 2) if pair % 2 == 0 else (2, 1):
            results[processes].append(run(processes, db, plan, work / f"run-{pair}-{processes}", args.steps))
            r = results[processes][-1]
            print(
                f"pair {pair + 1}: {processes} process(es): step {r['step_s']:.3f} s, "
                f"{r['completions_per_s']:.1f} completions/s",
                flush=True,
            )
    step_ratio = statistics.median(b["step_s"] / a["step_s"] for a, b in zip(results[1], results[2]))
    rate_ratio = statistics.median(
        b["completions_per_s"] / a["completions_per_s"] for a, b in zip(results[1], results[2])
    )
    print(
        json.dumps(
            {
                "steps": args.steps,
                "pairs": args.pairs,
                "one_process_step_s": round(statistics.median(r["step_s"] for r in results[1]), 3),
                "two_processes_step_s": round(statistics.median(r["step_s"] for r in results[2]), 3),
                "step_time_ratio_two_over_one": round(step_ratio, 3),
                "completions_per_s_ratio_two_over_one": round(rate_ratio, 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
