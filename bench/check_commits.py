"""`curriculab tasks check builtin` at two commits, each a fresh process from its own checkout,
alternated pairs (the order swapped every pair); medians and the median ratio (this over base).

    python bench/check_commits.py --base 9ea0c77 [--backend bwrap] [--pairs 3] [--jobs 1]

The base commit is checked out once into a temporary git worktree; this side is the checkout the
bench runs from. Both check the same 30 built-in tasks on the same backend.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


CPU: dict[Path, list[float]] = {}
"""CPU seconds (user + system, the process and every descendant it reaped) per run, by checkout:
steadier than wall time on a machine others load."""


def check(checkout: Path, backend: str, jobs: int) -> float:
    command = [sys.executable, "-m", "curriculab.cli", "tasks", "check", "builtin", "--backend", backend]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--jobs", str(jobs), "--json"], capture_output=True, timeout=1800, cwd=checkout, env=env
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(checkout, []).append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    try:
        flagged = [(r["task_id"], r["flags"]) for r in json.loads(done.stdout) if not r["ok"]]
    except ValueError:
        raise SystemExit(f"tasks check in {checkout} failed: {done.stderr.decode()[-500:]}") from None
    if flagged:  # timed all the same; said, so a flaky task is seen
        print(f"  {checkout}: flagged {flagged}", flush=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "namespaces"])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="curriculab-base-") as folder:
        base = Path(folder) / "checkout"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(base), args.base], check=True)
        try:
            this, before = [], []
            for k in range(args.pairs):
                sides = [(this, HERE), (before, base)]
                for times, checkout in sides if k % 2 == 0 else sides[::-1]:
                    times.append(check(checkout, args.backend, args.jobs))
                print(
                    f"pair {k + 1}: this {this[-1]:.1f} s ({CPU[HERE][-1]:.1f} s CPU), "
                    f"base {before[-1]:.1f} s ({CPU[base][-1]:.1f} s CPU)",
                    flush=True,
                )
            cpu = statistics.median(a / b for a, b in zip(CPU[HERE], CPU[base]))
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(base)], check=False)
    ratio = statistics.median(a / b for a, b in zip(this, before))
    print(
        f"{args.backend} --jobs {args.jobs}: this {statistics.median(this):.1f} s, base {args.base} "
        f"{statistics.median(before):.1f} s (medians of {args.pairs}); ratio (median of pairs) {ratio:.3f}, "
        f"in CPU seconds {cpu:.3f}"
    )


if __name__ == "__main__":
    main()
