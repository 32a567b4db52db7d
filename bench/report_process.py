"""What a user waits for: `curriculab report` as a process, against a one-query `curriculab query`
process on the same store (both pay Python's start, imports and opening the store), in
alternated pairs.

    python bench/report_process.py --db /tmp/bench50k/plan.duckdb [--pairs 3]

The store must be coded and fitted (`bench/plan_bench.py` leaves it so). Prints each pair and the
medians: report seconds, query seconds, report / query. Goals (issue #24): report ≤ 2× the query
process on a 10k store, and ≤ 1.5 s at 50k.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "curriculab.cli", "--db", str(args.db)]
    report = [*cli, "report", "--json", "-o", str(args.db.parent / "report-bench.json")]
    query = [*cli, "query", "select count(*) from trajectories"]
    timed(query)  # warm the page cache and the interpreter's bytecode once
    pairs = []
    for pair in range(args.pairs):
        sides = [("report", report), ("query", query)]
        if pair % 2:
            sides.reverse()
        seconds = {name: timed(command) for name, command in sides}
        pairs.append(seconds)
        print(
            f"pair {pair + 1}: report {seconds['report']:.2f} s, query {seconds['query']:.2f} s, "
            f"ratio {seconds['report'] / seconds['query']:.2f}",
            flush=True,
        )
    trajectories = subprocess.run(
        [*cli, "query", "--json", "select count(*) as n from trajectories"], check=True, capture_output=True, text=True
    ).stdout
    print(
        json.dumps(
            {
                "store": str(args.db),
                "trajectories": json.loads(trajectories)[0]["n"],
                "pairs": args.pairs,
                "report_s": round(statistics.median(p["report"] for p in pairs), 2),
                "query_s": round(statistics.median(p["query"] for p in pairs), 2),
                "ratio": round(statistics.median(p["report"] / p["query"] for p in pairs), 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
