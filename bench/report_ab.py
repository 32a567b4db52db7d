"""`curriculab report --json` as a process, this checkout against an earlier revision, alternated.

    python bench/report_ab.py --baseline 656f14e --db /tmp/report-bench/store-2084x8.duckdb [--pairs 5]

The store is one `bench/report_bench.py` built (coded and fitted). Both sides read it read-only, the
baseline imported from a git worktree of its revision (`bench/ab.py`), the order
swapped every pair. Prints the medians and the median ratio (this checkout / baseline).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ab import alternate, baseline_site, run_curriculab  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with.")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/report-ab"))
    args = parser.parse_args()

    with baseline_site(args.baseline, args.workdir) as site:

        def report(side: str | None) -> float:
            return run_curriculab(["report", "--json", "--db", str(args.db.resolve())], side, args.workdir)

        report(None), report(site)  # warm both
        alternate(args.pairs, report, site, {"baseline": args.baseline, "db": str(args.db)})


if __name__ == "__main__":
    main()
