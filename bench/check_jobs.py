"""`curriculab tasks check builtin --jobs N` against `--jobs 1`, each a fresh process, alternated
pairs (the order swapped every pair); medians and the median ratio.

    python bench/check_jobs.py [--backend docker] [--jobs 4] [--pairs 2]

Both sides check the same 30 built-in tasks on the same backend; only the number of tasks checked
at once differs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def check(backend: str, jobs: int) -> float:
    command = [sys.executable, "-m", "curriculab.cli", "tasks", "check", "builtin", "--backend", backend]
    started = time.perf_counter()
    done = subprocess.run([*command, "--jobs", str(jobs), "--json"], capture_output=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"tasks check --jobs {jobs} failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="docker", choices=["bwrap", "docker", "namespaces"])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    many, one = [], []
    for k in range(args.pairs):
        sides = [(many, args.jobs), (one, 1)]
        for times, jobs in sides if k % 2 == 0 else sides[::-1]:
            times.append(check(args.backend, jobs))
        print(f"pair {k + 1}: --jobs {args.jobs} {many[-1]:.1f} s, --jobs 1 {one[-1]:.1f} s", flush=True)
    ratio = statistics.median(a / b for a, b in zip(many, one))
    print(
        f"{args.backend}: --jobs {args.jobs} {statistics.median(many):.1f} s, --jobs 1 "
        f"{statistics.median(one):.1f} s (medians); ratio (median of pairs) {ratio:.2f}"
    )


if __name__ == "__main__":
    main()
