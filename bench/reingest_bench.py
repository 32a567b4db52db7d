"""A no-op re-ingest against the first ingest of the same corpus, in pairs.

    python bench/reingest_bench.py [--trajectories 10000] [--pairs 3] [--workdir /tmp/reingest-bench]

Each pair ingests a simulated Harbor corpus into a fresh store with the real `curriculab ingest`
command, then ingests it again unchanged (every input is then skipped after a stat, its files'
sizes and times matching what was read cleanly), then with `--verify` (every input read again,
content hashes deciding, as before the manifest). Prints the seconds and the median ratios
re-ingest / first and verify / first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(*args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "curriculab.cli", "ingest", *args], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr[-500:])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/reingest-bench"))
    args = parser.parse_args()

    from curriculab.analysis.simulate import simulate_corpus

    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    corpus = simulate_corpus(args.workdir / "corpus", n_tasks=max(8, args.trajectories // 9), attempts=3, seed=0).root
    runs = []
    for k in range(args.pairs):
        db = args.workdir / f"store{k}.duckdb"
        first = timed("--db", str(db), str(corpus))
        again = timed("--db", str(db), str(corpus))
        verify = timed("--db", str(db), "--verify", str(corpus))
        runs.append({"first": round(first, 2), "no_op": round(again, 2), "verify": round(verify, 2)})
        print(f"pair {k + 1}: {runs[-1]}", flush=True)
    print(json.dumps({"trajectories": args.trajectories, "runs": runs,
                      "no_op_over_first_median": round(statistics.median(r["no_op"] / r["first"] for r in runs), 3),
                      "verify_over_first_median": round(statistics.median(r["verify"] / r["first"] for r in runs), 3)}))


if __name__ == "__main__":
    main()
