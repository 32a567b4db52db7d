"""Rule-coding speed of this checkout against an earlier revision, alternated pairs on one store.

    python bench/coding_ab.py --baseline 6dea3aa [--trajectories 20000] [--pairs 5] [--workdir /tmp/coding-ab]

A simulated corpus is ingested once; each side then runs the real `curriculab code --coder rules`
on its own fresh copy of that store, one after the other, `--pairs` times, the order swapped every
pair. The baseline is imported from a git worktree of its revision (as in `bench/ingest_ab.py`).
Prints each pair's seconds, the median ratio (this checkout / baseline) and the spread.
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


def timed_coding(store: Path, db: Path, site: str | None) -> float:
    shutil.copy(store, db)
    env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
    command = [sys.executable, "-c", _BASELINE_BOOT] if site else [sys.executable, "-m", "curriculab.cli"]
    started = time.perf_counter()
    done = subprocess.run([*command, "code", "--coder", "rules", "--db", str(db)], env=env, capture_output=True,
                          timeout=1800, cwd=db.parent)
    if done.returncode != 0:
        raise SystemExit(f"coding failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with.")
    parser.add_argument("--trajectories", type=int, default=20000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/coding-ab"))
    args = parser.parse_args()

    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.simulate import simulate_corpus
    from curriculab.analysis.store import Store

    if args.workdir.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)
        shutil.rmtree(args.workdir)
    args.workdir.mkdir(parents=True)
    corpus = simulate_corpus(args.workdir / "corpus", n_tasks=max(8, args.trajectories // 9), attempts=3, seed=0).root
    store = args.workdir / "ingested.duckdb"
    with Store(store) as writer:
        ingest(writer, [corpus])
    site = baseline_tree(args.baseline, args.workdir)
    try:
        source = imported_from(str(site))
        if not source.startswith(str(args.workdir)):
            raise SystemExit(f"the baseline imports {source}, not the worktree: the comparison would be with itself")
        print(f"baseline {args.baseline} imported from {source}", flush=True)
        timed_coding(store, args.workdir / "warm.duckdb", None)
        pairs = []
        for k in range(args.pairs):
            order = [("current", None), ("baseline", str(site))]
            if k % 2:
                order.reverse()
            times = {name: timed_coding(store, args.workdir / f"{name}.duckdb", path) for name, path in order}
            pairs.append(times)
            print(f"pair {k + 1}: current {times['current']:.2f} s, baseline {times['baseline']:.2f} s", flush=True)
        ratios = [p["current"] / p["baseline"] for p in pairs]
        print(json.dumps({"baseline": args.baseline, "trajectories": args.trajectories, "pairs": pairs,
                          "ratio_median": round(statistics.median(ratios), 3),
                          "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)]}))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)


if __name__ == "__main__":
    main()
