"""`curriculab tasks check builtin` as a process, this checkout against the commit before the judge's
rework (issue #56), alternated: what the judge's integrity costs.

    python bench/judge_ab.py [--baseline 480450f] [--backend bwrap] [--pairs 5]

Each side checks the 30 built-in tasks (the oracle and the do-nothing run of every task: 60
episodes, each judged) with its own code and its own copy of the suite; the baseline is imported
from a git worktree of its revision (`bench/ab.py`), the order swapped every pair. Prints the
medians and the median ratio (this checkout / baseline). The baseline's Docker tmpfs are noexec,
so on `--backend docker` five of its tasks fail their check (exit 1, accepted here).
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
    parser.add_argument("--baseline", default="480450f", help="A git revision to compare with.")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "namespaces"])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/judge-ab"))
    args = parser.parse_args()

    with baseline_site(args.baseline, args.workdir) as site:

        def check(side: str | None) -> float:
            command = ["tasks", "check", "builtin", "--backend", args.backend, "--json"]
            return run_curriculab(command, side, args.workdir, ok=(0, 1))

        check(None), check(site)  # warm both (page cache, the Docker image)
        alternate(args.pairs, check, site, {"baseline": args.baseline, "backend": args.backend})


if __name__ == "__main__":
    main()
