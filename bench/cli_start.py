"""How long a one-query `curriculab query` process takes, against an earlier revision, alternated.

    python bench/cli_start.py --baseline 656f14e [--pairs 10] [--workdir /tmp/cli-start]

Every command pays the CLI's imports before it does anything; `query` does the least after them,
so its process time is the floor a user waits for. Both sides run `curriculab query "select 1"` on
the same small store, the baseline imported from a git worktree of its revision
(`bench/ab.py`). Prints the medians and the median ratio (this checkout / baseline).
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
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/cli-start"))
    args = parser.parse_args()

    from curriculab.analysis.store import Store

    with baseline_site(args.baseline, args.workdir) as site:
        db = args.workdir / "store.duckdb"
        Store(db).close()

        def query(side: str | None) -> float:
            return run_curriculab(["query", "select 1", "--db", str(db)], side, args.workdir)

        query(None), query(site)  # warm both
        alternate(args.pairs, query, site, {"baseline": args.baseline})


if __name__ == "__main__":
    main()
