"""Render time of every dashboard page on a large store, measured with AppTest, against the time
of the page's queries run alone (the floor), in one process.

    python bench/dashboard_bench.py --db /tmp/bench50k/plan.duckdb [--repeat 3]

Each page is loaded once cold (cache cleared: its queries, the sidebar's included, run against the
store; their time inside DuckDB is the floor), then rendered `--repeat` times warm (filters
unchanged: reads come from the cache keyed on the store's content version; the SQL page reruns
its query, which is never cached). The trajectory page shows a coded trajectory; `trajectory-1000`
shows a 1,000-step trajectory the bench adds to the store (once); the labelling page shows its
queue for an annotator. Goal: every warm render ≤ 1 s, the 1,000-step trajectory too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGES = [
    "overview",
    "failures",
    "trajectory",
    "trajectory-1000",
    "difficulty",
    "milestones",
    "coders",
    "curriculum",
    "training",
    "labelling",
    "sql",
]
LONG_ID = "bench-long-1000"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from streamlit.testing.v1 import AppTest

    from curriculab.analysis import queries
    from curriculab.analysis.store import Store

    with Store(args.db) as store:  # migrate once, as `curriculab db migrate` would
        if LONG_ID not in queries.trajectory_ids(store):
            from curriculab.analysis.ingest import ingest

            long = args.db.parent / f"{LONG_ID}.jsonl"
            long.write_text(
                json.dumps(
                    {
                        "trajectory_id": LONG_ID,
                        "run_id": "bench-long",
                        "task_id": "bench-long-task",
                        "model": "bench-long",
                        "outcome": "failed",
                        "steps": [
                            {
                                "step_idx": i,
                                "source": "agent" if i % 2 else "env",
                                "action": "run" if i % 2 else None,
                                "command": f"make test-{i}" if i % 2 else None,
                                "output": f"line {i}\n" * 40,
                            }
                            for i in range(1000)
                        ],
                    }
                )
                + "\n"
            )
            ingest(store, [long], workers=1)
        trajectories = int(queries.store_fingerprint(store)["trajectories"])
        steps = int(store.frame("select count(*) as n from steps")["n"].iloc[0])
    os.environ["CURRICULAB_DB"] = str(args.db)
    spent = [0.0]
    original = Store.frame

    def timed(self, sql, params=None):  # time inside the store: the floor a page cannot go under
        started = time.perf_counter()
        try:
            return original(self, sql, params)
        finally:
            spent[0] += time.perf_counter() - started

    Store.frame = timed
    from curriculab.dashboard import common

    with Store(args.db, read_only=True) as store:
        example = store.frame("select trajectory_id from failure_codes order by trajectory_id limit 1")[
            "trajectory_id"
        ].iloc[0]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    results = {}
    for page in PAGES:
        common._cached.clear()  # cold: every read of the page (sidebar included) goes to the store
        common._LAST_GOOD.clear()
        spent[0] = 0.0
        started = time.perf_counter()
        if page.startswith("trajectory"):  # a trajectory shown, as after a drill-down's link
            at.query_params["trajectory"] = LONG_ID if page == "trajectory-1000" else example
        at.switch_page(f"dashboard/views/{page.split('-')[0]}.py").run()
        if page == "labelling":
            at.text_input(key="label_annotator").input("bench").run()
        if page == "sql":  # the default query run
            at.button(key="sql_run").click().run()
        cold = time.perf_counter() - started
        floor = spent[0]
        if at.exception:
            raise SystemExit(f"{page}: {at.exception[0].value}")
        warm = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            at.button(key="sql_run").click().run() if page == "sql" else at.run()
            warm.append(time.perf_counter() - started)
        results[page] = {
            "cold_s": round(cold, 3),
            "queries_alone_s": round(floor, 3),
            "warm_s": round(statistics.median(warm), 3),
            "warm_over_queries": round(statistics.median(warm) / floor, 3) if floor > 0.001 else None,
        }
        print(page, results[page], flush=True)
    print(
        json.dumps(
            {
                "trajectories": trajectories,
                "steps": steps,
                "repeat": args.repeat,
                "pages": results,
                "goal_warm_le_1s": all(r["warm_s"] <= 1.0 for r in results.values()),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
