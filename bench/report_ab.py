"""`curriculab report --json` as a process, this checkout against an earlier revision, alternated.

    python bench/report_ab.py --baseline 656f14e --db /tmp/report-bench/store-2084x8.duckdb [--pairs 5]

The store is one `bench/report_bench.py` built (coded and fitted). Both sides read it read-only, the
baseline imported from a git worktree of its revision (as in `bench/ingest_ab.py`), the order
swapped every pair. Prints the medians and the median ratio (this checkout / baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from ingest_ab import _BASELINE_BOOT, baseline_tree, imported_from  # noqa: E402


def timed_report(db: Path, site: str | None, cwd: Path) -> float:
    env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
    command = [sys.executable, "-c", _BASELINE_BOOT] if site else [sys.executable, "-m", "curriculab.cli"]
    started = time.perf_counter()
    subprocess.run([*command, "report", "--json", "--db", str(db)], env=env, capture_output=True, check=True, cwd=cwd)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with.")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/report-ab"))
    args = parser.parse_args()
    if args.workdir.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)
        shutil.rmtree(args.workdir)
    args.workdir.mkdir(parents=True)
    site = baseline_tree(args.baseline, args.workdir)
    try:
        source = imported_from(str(site))
        if not source.startswith(str(args.workdir)):
            raise SystemExit(f"the baseline imports {source}, not the worktree: the comparison would be with itself")
        timed_report(args.db, None, args.workdir), timed_report(args.db, str(site), args.workdir)  # warm both
        current, baseline = [], []
        for k in range(args.pairs):
            order = [(current, None), (baseline, str(site))]
            for times, path in (order if k % 2 == 0 else order[::-1]):
                times.append(timed_report(args.db, path, args.workdir))
            print(f"pair {k + 1}: current {current[-1]:.2f} s, baseline {baseline[-1]:.2f} s", flush=True)
        ratios = [c / b for c, b in zip(current, baseline)]
        print(json.dumps({"baseline": args.baseline, "pairs": args.pairs,
                          "current_s": round(statistics.median(current), 3),
                          "baseline_s": round(statistics.median(baseline), 3),
                          "ratio_median": round(statistics.median(ratios), 3),
                          "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)]}))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)


if __name__ == "__main__":
    main()
