"""Rule-coding speed of this checkout against an earlier revision, alternated pairs on one store.

    python bench/coding_ab.py --baseline 6dea3aa [--trajectories 20000] [--pairs 5] [--workdir /tmp/coding-ab]

A simulated corpus is ingested once; each side then runs the real `curriculab code --coder rules`
on its own fresh copy of that store, one after the other, `--pairs` times, the order swapped every
pair. The baseline is imported from a git worktree of its revision (`bench/ab.py`).
Prints each pair's seconds, the median ratio (this checkout / baseline) and the spread.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ab import alternate, baseline_site, run_curriculab  # noqa: E402


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

    with baseline_site(args.baseline, args.workdir) as site:
        corpus = simulate_corpus(
            args.workdir / "corpus", n_tasks=max(8, args.trajectories // 9), attempts=3, seed=0
        ).root
        store = args.workdir / "ingested.duckdb"
        with Store(store) as writer:
            ingest(writer, [corpus])

        def code(side: str | None) -> float:
            db = args.workdir / f"{'baseline' if side else 'current'}.duckdb"
            shutil.copy(store, db)  # each run codes a store nothing has coded
            return run_curriculab(["code", "--coder", "rules", "--db", str(db)], side, args.workdir)

        code(None)
        alternate(args.pairs, code, site, {"baseline": args.baseline, "trajectories": args.trajectories})


if __name__ == "__main__":
    main()
