"""Ingest speed of this checkout against an earlier revision, alternated pairs on the same corpus.

    python bench/ingest_ab.py --baseline HEAD~5 [--trajectories 5000] [--pairs 3] [--workdir /tmp/ingest-ab] [--cpu]

Both sides run the real `curriculab ingest` command in a fresh store, one after the other,
`--pairs` times, the baseline imported from a git worktree of its revision (`bench/ab.py`).
Prints each pair's seconds, the median ratio (this checkout / baseline) and the spread. `--cpu`
counts CPU seconds (user + system, the command and its reader workers) instead of wall seconds: on a
machine others load, wall time measures the neighbours as much as the code.
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ab import alternate, baseline_site, run_curriculab  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with (e.g. HEAD~5).")
    parser.add_argument("--trajectories", type=int, default=5000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ingest-ab"))
    parser.add_argument("--cpu", action="store_true", help="CPU seconds of the command and its workers, not wall")
    args = parser.parse_args()

    from curriculab.analysis.simulate import simulate_corpus

    with baseline_site(args.baseline, args.workdir) as site:
        corpus = simulate_corpus(
            args.workdir / "corpus", n_tasks=max(8, args.trajectories // 9), attempts=3, seed=0
        ).root

        def ingest(side: str | None, name: str = "") -> float:
            db = args.workdir / f"{name or ('baseline' if side else 'current')}.duckdb"
            db.unlink(missing_ok=True)  # a fresh store each time; exit 1 (something quarantined) is an ingest too
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = run_curriculab(["ingest", "--db", str(db), str(corpus)], side, args.workdir, ok=(0, 1))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime if args.cpu else wall

        ingest(None, "warm")  # page cache warm for both
        report = {
            "baseline": args.baseline,
            "trajectories": args.trajectories,
            "measure": "cpu" if args.cpu else "wall",
        }
        alternate(args.pairs, ingest, site, report)


if __name__ == "__main__":
    main()
