"""Rule-coder benchmark: all rule coders vs one full scan of `steps`, same store, one run.

    python bench/coding_bench.py --db bench/out/ingest.duckdb   # a store from bench/ingest_bench.py

Baseline (issue #3): `select count(*) from steps where command like '%pytest%' or output like '%Error%'`
(best of three after a warm-up). Goal: all rule coders ≤ 3× that. Also printed: the ratio to one
ordered pass (a `row_number()` window over steps), the least that sequence rules must do.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCAN = "select count(*) from steps where command like '%pytest%' or output like '%Error%'"
# A second reference: the cheapest ordered pass over steps, which any "A, then B, with no C in
# between" rule needs and a filter scan does not.
ORDERED = (
    "select max(rn) from (select row_number() over (partition by trajectory_id order by step_idx) as rn from steps)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="A store with trajectories ingested.")
    args = parser.parse_args()

    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.store import Store, row_count

    with Store(args.db) as store:
        n_steps, n_traj = row_count(store, "steps"), row_count(store, "trajectories")
        store.query(SCAN)  # warm-up: page the columns in
        scans, ordered = [], []
        for _ in range(3):
            t = time.perf_counter()
            store.query(SCAN)
            scans.append(time.perf_counter() - t)
            t = time.perf_counter()
            store.query(ORDERED)
            ordered.append(time.perf_counter() - t)
        t = time.perf_counter()
        report = run_rule_coders(store)
        coding = time.perf_counter() - t
    scan, one_ordered_pass = min(scans), min(ordered)
    print(
        json.dumps(
            {
                "trajectories": n_traj,
                "steps": n_steps,
                "scan_s": round(scan, 3),
                "ordered_pass_s": round(one_ordered_pass, 3),
                "rule_coders_s": round(coding, 3),
                "ratio_coders_over_scan": round(coding / scan, 2),
                "ratio_coders_over_ordered_pass": round(coding / one_ordered_pass, 2),
                "goal": "ratio over scan <= 3.0",
                "present": {code: c["present"] for code, c in sorted(report.counts.items())},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
