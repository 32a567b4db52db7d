"""A no-op re-ingest against the first ingest of the same corpus, in pairs.

    python bench/reingest_bench.py [--trajectories 10000] [--pairs 3] [--workdir /tmp/reingest-bench]
                                   [--reuse-corpus] [--no-verify]

Each pair ingests a simulated Harbor corpus into a fresh store with the real `curriculab ingest`
command, then ingests it again unchanged (every input is then skipped after a stat, its files'
sizes and times matching what was read cleanly), then with `--verify` (every input read again,
content hashes deciding, as before the manifest). Prints the seconds and the median ratios
re-ingest / first and verify / first. `--reuse-corpus` keeps a corpus an earlier run left in the
workdir (50k trials take minutes to simulate); `--no-verify` leaves the `--verify` pass out.
Goal (issue #44): a no-op ≤ 0.10× the first, from 5,000 trials up.
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
    parser.add_argument(
        "--reuse-corpus", action="store_true", help="Keep the corpus an earlier run left in the workdir."
    )
    parser.add_argument("--no-verify", action="store_true", help="Leave out the --verify pass.")
    args = parser.parse_args()

    from curriculab.analysis.simulate import simulate_corpus

    corpus = args.workdir / "corpus"
    if not (args.reuse_corpus and corpus.is_dir()):
        shutil.rmtree(args.workdir, ignore_errors=True)
        args.workdir.mkdir(parents=True)
        corpus = simulate_corpus(corpus, n_tasks=max(8, args.trajectories // 9), attempts=3, seed=0).root
    runs = []
    for k in range(args.pairs):
        db = args.workdir / f"store{k}.duckdb"
        for stale in (db, db.with_name(db.name + ".wal")):
            stale.unlink(missing_ok=True)
        first = timed("--db", str(db), str(corpus))
        again = timed("--db", str(db), str(corpus))
        runs.append({"first": round(first, 2), "no_op": round(again, 2)})
        if not args.no_verify:
            runs[-1]["verify"] = round(timed("--db", str(db), "--verify", str(corpus)), 2)
        print(f"pair {k + 1}: {runs[-1]}", flush=True)
    summary = {
        "trajectories": args.trajectories,
        "runs": runs,
        "no_op_over_first_median": round(statistics.median(r["no_op"] / r["first"] for r in runs), 3),
    }
    if not args.no_verify:
        summary["verify_over_first_median"] = round(statistics.median(r["verify"] / r["first"] for r in runs), 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
