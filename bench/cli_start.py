"""How long a one-query `curriculab query` process takes, against an earlier revision, alternated.

    python bench/cli_start.py --baseline 656f14e [--pairs 10] [--workdir /tmp/cli-start]

Every command pays the CLI's imports before it does anything; `query` does the least after them,
so its process time is the floor a user waits for. Both sides run `curriculab query "select 1"` on
the same small store, the baseline imported from a git worktree of its revision (as in
`bench/ingest_ab.py`). Prints the medians and the median ratio (this checkout / baseline).
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest_ab import _BASELINE_BOOT, baseline_tree, imported_from  # noqa: E402


def timed_query(db: Path, site: str | None) -> float:
    env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
    command = [sys.executable, "-c", _BASELINE_BOOT] if site else [sys.executable, "-m", "curriculab.cli"]
    started = time.perf_counter()
    subprocess.run([*command, "query", "select 1", "--db", str(db)], env=env, capture_output=True, check=True,
                   cwd=db.parent)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with.")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/cli-start"))
    args = parser.parse_args()

    from curriculab.analysis.store import Store

    if args.workdir.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)
        shutil.rmtree(args.workdir)
    args.workdir.mkdir(parents=True)
    db = args.workdir / "store.duckdb"
    Store(db).close()
    site = baseline_tree(args.baseline, args.workdir)
    try:
        source = imported_from(str(site))
        if not source.startswith(str(args.workdir)):
            raise SystemExit(f"the baseline imports {source}, not the worktree: the comparison would be with itself")
        timed_query(db, None), timed_query(db, str(site))  # warm both
        current, baseline = [], []
        for k in range(args.pairs):
            order = [(current, None), (baseline, str(site))]
            for times, path in (order if k % 2 == 0 else order[::-1]):
                times.append(timed_query(db, path))
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
