"""Is the real-browser test reliable on a loaded machine? Runs it `--runs` times while busy
processes keep every core loaded (the condition under which the old test, with its fixed settle,
failed), and counts failures.

    python scripts/investigations/browser_flake.py [--runs 20] [--test test_every_page_renders_and_a_code_leads_to_its_evidence]

Each run is a fresh `pytest` process (server, browser and demo store started anew). Prints one
line per run and a JSON summary: runs, passed, failed, median seconds per run. Goal: 0 failures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _burn(stop_at: float) -> None:
    while time.time() < stop_at:
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--test", default="test_every_page_renders_and_a_code_leads_to_its_evidence")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes (default: one per core)")
    args = parser.parse_args()

    burners = [
        multiprocessing.Process(target=_burn, args=(time.time() + 24 * 3600,), daemon=True) for _ in range(args.load)
    ]
    for burner in burners:
        burner.start()
    outcomes, seconds = [], []
    try:
        for run in range(1, args.runs + 1):
            started = time.perf_counter()
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"tests/dashboard/test_browser.py::{args.test}",
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            seconds.append(time.perf_counter() - started)
            outcomes.append(result.returncode == 0)
            tail = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-200:]
            print(f"run {run}: {'pass' if outcomes[-1] else 'FAIL'} in {seconds[-1]:.1f} s ({tail})", flush=True)
    finally:
        for burner in burners:
            burner.terminate()
    print(
        json.dumps(
            {
                "test": args.test,
                "load_processes": args.load,
                "cores": os.cpu_count(),
                "runs": len(outcomes),
                "passed": sum(outcomes),
                "failed": len(outcomes) - sum(outcomes),
                "median_s_per_run": round(statistics.median(seconds), 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
