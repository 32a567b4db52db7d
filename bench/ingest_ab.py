"""Ingest speed of this checkout against an earlier revision, alternated pairs on the same corpus.

    python bench/ingest_ab.py --baseline HEAD~5 [--trajectories 5000] [--pairs 3] [--workdir /tmp/ingest-ab]

The baseline revision is checked out into a git worktree and imported from there (its own
`analysis/`, `taxonomy/`, ... under a `curriculab` package built from symlinks), so both sides run
the real `curriculab ingest` command in a fresh store, one after the other, `--pairs` times.
Prints each pair's seconds, the median ratio (this checkout / baseline) and the spread.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PACKAGES = ("analysis", "taxonomy", "planner", "training", "dashboard")


def baseline_tree(revision: str, work: Path) -> Path:
    """A directory to put on PYTHONPATH that imports `curriculab.*` from `revision`."""
    checkout = work / "baseline-src"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(checkout), revision],
                   check=True, capture_output=True)
    site = work / "baseline-site"
    package = site / "curriculab"
    shutil.copytree(checkout / "curriculab", package)
    for name in PACKAGES:
        if (checkout / name).is_dir():
            (package / name).symlink_to(checkout / name)
    return site


# The editable install's import finder would win over PYTHONPATH: the baseline drops it first.
_BASELINE_BOOT = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
                  "str(getattr(f, '__module__', '')) + type(f).__module__]; sys.argv[0] = 'curriculab'; "
                  "runpy.run_module('curriculab.cli', run_name='__main__')")


def timed_ingest(corpus: Path, db: Path, site: str | None) -> float:
    db.unlink(missing_ok=True)
    env = {**__import__("os").environ, **({"PYTHONPATH": site} if site else {})}
    command = [sys.executable, "-c", _BASELINE_BOOT] if site else [sys.executable, "-m", "curriculab.cli"]
    started = time.perf_counter()
    # from the work directory: `-c` puts the working directory first on sys.path, and the repo root holds curriculab/
    done = subprocess.run([*command, "ingest", "--db", str(db), str(corpus)], env=env, capture_output=True, timeout=1800,
                          cwd=db.parent)
    if done.returncode not in (0, 1):
        raise SystemExit(f"ingest failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def imported_from(site: str) -> str:
    """Where the baseline side imports the ingest code from (checked, so the comparison is real)."""
    code = _BASELINE_BOOT.split("; runpy")[0] + "; import curriculab.analysis.ingest.common as c; print(c.__file__)"
    return subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONPATH": site},
                          capture_output=True, text=True, check=True, cwd=Path(site).parent).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with (e.g. HEAD~5).")
    parser.add_argument("--trajectories", type=int, default=5000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ingest-ab"))
    args = parser.parse_args()

    from curriculab.analysis.simulate import simulate_corpus

    if args.workdir.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(args.workdir / "baseline-src")],
                       capture_output=True)
        shutil.rmtree(args.workdir)
    args.workdir.mkdir(parents=True)
    tasks = max(8, args.trajectories // 9)
    corpus = simulate_corpus(args.workdir / "corpus", n_tasks=tasks, attempts=3, seed=0).root
    site = baseline_tree(args.baseline, args.workdir)
    try:
        source = imported_from(str(site))
        if not source.startswith(str(args.workdir)):
            raise SystemExit(f"the baseline imports {source}, not the worktree: the comparison would be with itself")
        print(f"baseline {args.baseline} imported from {source}", flush=True)
        timed_ingest(corpus, args.workdir / "warm.duckdb", None)  # page cache warm for both
        pairs = []
        for k in range(args.pairs):
            order = [("current", None), ("baseline", str(site))]
            if k % 2:
                order.reverse()
            times = {name: timed_ingest(corpus, args.workdir / f"{name}.duckdb", path) for name, path in order}
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
