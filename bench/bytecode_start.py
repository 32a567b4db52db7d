"""A small ingest with curriculab's own bytecode compiled (as `scripts/setup.sh` leaves it) against
without it, alternated pairs in this checkout.

    python bench/bytecode_start.py [--pairs 10]

Where PYTHONDONTWRITEBYTECODE is set (this machine, CI), an editable install's modules were compiled
again by every command. The side without bytecode runs with the project's `__pycache__` folders
renamed aside (restored on the way out, whatever happens); the dependencies keep theirs on both
sides. Both sides ingest `tests/fixtures/harbor` into a fresh store on one core (`taskset -c 0`).
Prints the medians and the median ratio (with / without).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("curriculab", "analysis", "taxonomy", "planner", "training", "dashboard")


def caches() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("__pycache__"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    compile_ = [sys.executable, "-m", "compileall", "-q", "-x", "terminal/suite/", *PACKAGES]  # as scripts/setup.sh
    subprocess.run(compile_, cwd=ROOT, check=True, capture_output=True)
    folders = caches()
    if not folders:
        sys.exit("no __pycache__ folders in the project after compileall")

    def bytecode(present: bool) -> None:
        for folder in folders:
            aside = folder.with_name("__pycache__.aside")
            if present and aside.exists():
                aside.rename(folder)
            elif not present and folder.exists():
                folder.rename(aside)

    def ingest(work: Path) -> float:
        db = work / "store.duckdb"
        for stale in (db, Path(f"{db}.wal")):
            stale.unlink(missing_ok=True)
        started = time.perf_counter()
        subprocess.run(
            [
                "taskset",
                "-c",
                "0",
                sys.executable,
                "-m",
                "curriculab.cli",
                "ingest",
                "--json",
                "--workers",
                "1",
                "--db",
                str(db),
                str(ROOT / "tests" / "fixtures" / "harbor"),
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        return time.perf_counter() - started

    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as work:
        try:
            for pair in range(args.pairs):
                for present in (True, False) if pair % 2 == 0 else (False, True):
                    bytecode(present)
                    times[present].append(ingest(Path(work)))
                print(f"pair {pair + 1}: with {times[True][-1]:.2f} s, without {times[False][-1]:.2f} s", flush=True)
        finally:
            bytecode(True)
    ratios = [w / wo for w, wo in zip(times[True], times[False])]
    print(
        json.dumps(
            {
                "with_s": round(statistics.median(times[True]), 3),
                "without_s": round(statistics.median(times[False]), 3),
                "ratio_median": round(statistics.median(ratios), 3),
                "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
                "folders": len(folders),
            }
        )
    )


if __name__ == "__main__":
    main()
