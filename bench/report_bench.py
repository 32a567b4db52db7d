"""`build_report` with the bootstrap weight matrices cached against drawing them for every interval.

    python bench/report_bench.py [--tasks 400] [--attempts 8] [--pairs 3] [--workdir /tmp/report-bench]

Simulates a corpus (tasks × attempts × 3 models; 400 × 8 ≈ 9,600 trajectories), ingests, codes and
fits it once, then times `build_report` on the read-only store in alternated pairs: the baseline
swaps in the uncached draw (`_cluster_weights.__wrapped__`, exactly what every call did before),
the current side uses the cache (cleared before each run, so it pays its own first draws).
Prints each pair and the median ratio current / baseline; the intervals of both sides are compared.
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
    args = parser.parse_args()

    from curriculab.analysis import stats
    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.report import build_report
    from curriculab.analysis.simulate import simulate_corpus
    from curriculab.analysis.store import Store

    db = args.workdir / f"store-{args.tasks}x{args.attempts}.duckdb"
    if not db.exists():
        args.workdir.mkdir(parents=True, exist_ok=True)
        corpus = simulate_corpus(args.workdir / f"corpus-{args.tasks}x{args.attempts}", n_tasks=args.tasks,
                                 attempts=args.attempts, seed=0)
        with Store(db) as store:
            ingest(store, [corpus.root])
            run_rule_coders(store)
            fit_store(store)
    cached = stats._cluster_weights

    def timed(use_cache: bool):
        stats._cluster_weights = cached if use_cache else cached.__wrapped__
        cached.cache_clear()
        with Store(db, read_only=True) as store:
            started = time.perf_counter()
            report = build_report(store)
            return time.perf_counter() - started, report

    try:
        with Store(db, read_only=True) as store:
            trajectories = store.count("trajectories")
        timed(True)  # warm imports and the page cache for both sides
        pairs = []
        for k in range(args.pairs):
            order = [("current", True), ("baseline", False)]
            if k % 2:
                order.reverse()
            runs = {name: timed(flag) for name, flag in order}
            same = all(a.get("cluster_low") == b.get("cluster_low") or
                       abs((a.get("cluster_low") or 0) - (b.get("cluster_low") or 0)) < 1e-12
                       for a, b in zip(runs["current"][1]["overview"], runs["baseline"][1]["overview"]))
            pairs.append({"current": round(runs["current"][0], 3), "baseline": round(runs["baseline"][0], 3),
                          "same_intervals": same})
            print(f"pair {k + 1}: {pairs[-1]}", flush=True)
    finally:
        stats._cluster_weights = cached
    ratios = [p["current"] / p["baseline"] for p in pairs]
    print(json.dumps({"trajectories": trajectories, "pairs": pairs, "ratio_median": round(statistics.median(ratios), 3),
                      "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)]}))


if __name__ == "__main__":
    main()
