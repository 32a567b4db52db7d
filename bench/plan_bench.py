"""Planning time on a large store, against the report's queries on the same store, in one process.

    python bench/plan_bench.py --db /tmp/bench50k/ingest.duckdb [--repeat 3]

The store comes from `bench/ingest_bench.py` (50,000 trajectories). Before timing, it is made
ready as a team's store would be (not timed): rule codes, an IRT fit. Then, alternating, each
side `--repeat` times: `build_report` (the report's reads) and `build_plan` for every model over
the built-in problems (capability, failure targets, task mix, provenance hash). Goal: a plan in
under 10 s; the ratio to the report shows what planning adds.
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from curriculab.analysis import queries
    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.report import build_report
    from curriculab.analysis.store import Store
    from curriculab.planner.plan import build_plan
    from curriculab.training.problems import builtin_problems

    with Store(args.db) as store:
        if queries.latest_taxonomy_version(store, "rules") is None:
            print("coding the store once (not timed)...", flush=True)
            run_rule_coders(store)
        if queries.fit_staleness(store)["fitted"] == 0:
            print("fitting IRT once (not timed)...", flush=True)
            fit_store(store)
    problems = builtin_problems()
    report_s, plan_s = [], []
    with Store(args.db, read_only=True) as store:
        models = queries.known_models(store)
        trajectories = int(queries.store_fingerprint(store)["trajectories"])
        for _ in range(args.repeat):
            started = time.perf_counter()
            build_report(store)
            report_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            for model in models:
                build_plan(store, model, problems, "builtin")
            plan_s.append((time.perf_counter() - started) / len(models))
            print(f"report {report_s[-1]:.2f} s, plan {plan_s[-1]:.2f} s per model", flush=True)
    report, plan = statistics.median(report_s), statistics.median(plan_s)
    print(
        json.dumps(
            {
                "trajectories": trajectories,
                "models": len(models),
                "repeat": args.repeat,
                "report_s": round(report, 3),
                "plan_s_per_model": round(plan, 3),
                "ratio_plan_over_report": round(plan / report, 3),
                "goal_plan_under_10s": plan < 10,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
