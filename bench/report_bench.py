"""`build_report` against an earlier way of computing its task-clustered intervals, in one process.

    python bench/report_bench.py [--tasks 400] [--attempts 8] [--pairs 3] [--baseline per-call|uncached]

Simulates a corpus (tasks × attempts × 3 models; 400 × 8 ≈ 9,600 trajectories), ingests, codes and
fits it once, then times `build_report` on the read-only store in alternated pairs. The current side
computes every interval in one batched call (`stats.cluster_bootstraps`). Baselines, swapped in:
`per-call` (issue #24, item 3), one `cluster_bootstrap` call per interval with the cached weights,
as the report did before the batching; `uncached`, the same with every call drawing its weight
matrix afresh, as before the cache. The weight cache is cleared before every run, so each side pays
its own draws. Prints each pair, the median ratio current / baseline, and whether every interval of
the two sides is the same.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--attempts", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/report-bench"))
    parser.add_argument("--baseline", choices=["per-call", "uncached"], default="per-call")
    args = parser.parse_args()

    from curriculab.analysis import stats
    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.report import build_report
    from curriculab.analysis.simulate import simulate_corpus
    from curriculab.analysis.store import Store, row_count

    db = args.workdir / f"store-{args.tasks}x{args.attempts}.duckdb"
    if not db.exists():
        args.workdir.mkdir(parents=True, exist_ok=True)
        corpus = simulate_corpus(
            args.workdir / f"corpus-{args.tasks}x{args.attempts}", n_tasks=args.tasks, attempts=args.attempts, seed=0
        )
        with Store(db) as store:
            ingest(store, [corpus.root])
            run_rule_coders(store)
            fit_store(store)
    from curriculab.analysis import report as report_module

    cached, batched = stats._cluster_weights, report_module.cluster_bootstraps

    def one_call_each(groups):
        return [stats.cluster_bootstrap(k, n) for k, n in groups]

    def timed(current: bool):
        stats._cluster_weights = cached if current or args.baseline == "per-call" else cached.__wrapped__
        report_module.cluster_bootstraps = batched if current else one_call_each
        cached.cache_clear()
        with Store(db, read_only=True) as store:
            started = time.perf_counter()
            report = build_report(store)
            return time.perf_counter() - started, report

    def intervals(report):
        rows = report["overview"] + [r for rows in report["top_failure_modes"].values() for r in rows]
        return [(r["cluster_low"], r["cluster_high"]) for r in rows]

    try:
        with Store(db, read_only=True) as store:
            trajectories = row_count(store, "trajectories")
        timed(True)  # warm imports and the page cache for both sides
        pairs = []
        for k in range(args.pairs):
            order = [("current", True), ("baseline", False)]
            if k % 2:
                order.reverse()
            runs = {name: timed(flag) for name, flag in order}
            mine, theirs = intervals(runs["current"][1]), intervals(runs["baseline"][1])
            same = len(mine) == len(theirs) and all(
                a == b or (None not in a + b and max(abs(x - y) for x, y in zip(a, b)) < 1e-12)
                for a, b in zip(mine, theirs)
            )
            pairs.append(
                {
                    "current": round(runs["current"][0], 3),
                    "baseline": round(runs["baseline"][0], 3),
                    "same_intervals": same,
                    "intervals": len(mine),
                }
            )
            print(f"pair {k + 1}: {pairs[-1]}", flush=True)
    finally:
        stats._cluster_weights, report_module.cluster_bootstraps = cached, batched
    ratios = [p["current"] / p["baseline"] for p in pairs]
    print(
        json.dumps(
            {
                "trajectories": trajectories,
                "baseline": args.baseline,
                "pairs": pairs,
                "ratio_median": round(statistics.median(ratios), 3),
                "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
            }
        )
    )


if __name__ == "__main__":
    main()
