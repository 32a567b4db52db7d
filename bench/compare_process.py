"""What a user waits for: `curriculab compare A B --json` as a process, against a one-query
`curriculab query` process on the same store, in alternated pairs (issue #68 item 4).

    python bench/compare_process.py [--pairs 5] [--out /tmp/bench-compare]

Writes a leaderboard in Terminal-Bench's per-trial shape under `--out` (13 systems, 5 runs each,
80 tasks: 5,200 trials, as the real leaderboard snapshot; seeded outcomes, some agent timeouts),
ingests it, and prints each pair and the medians: compare seconds, query seconds, compare / query.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

AGENTS = ("terminus", "openhands", "goose", "codex", "mini", "claude-code", "warp")
MODELS = ("claude-sonnet-4", "gpt-5")
TASKS, RUNS = 80, 5


def write_leaderboard(root: Path) -> Path:
    rnd = random.Random(0)
    systems = [(a, m) for a in AGENTS for m in MODELS][:13]
    start = datetime(2025, 8, 1, tzinfo=UTC)
    dataset = root / "terminal-bench-core:0.1.1"
    for s, (agent, model) in enumerate(systems):
        skill = rnd.random()
        for run in range(RUNS):
            run_dir = dataset / f"202508{s + 10:02d}_{agent}_{model}" / f"run{run}_2025-08-{s + 1:02d}__12-00-00"
            for t in range(TASKS):
                task, name = f"task-{t:03d}", f"task-{t:03d}.1-of-1.2025-08-{s + 1:02d}__12-00-00"
                timeout = t > 40 and rnd.random() < 0.15
                passed = not timeout and rnd.random() < max(0.0, min(1.0, skill - t / 100 + 0.3))
                began = start + timedelta(minutes=t + 100 * run + 1000 * s)
                seconds = 600.0 if timeout else rnd.uniform(30, 500)
                trial = {
                    "id": f"{s}-{run}-{t}",
                    "trial_name": name,
                    "task_id": task,
                    "instruction": f"Do {task}.",
                    "is_resolved": passed,
                    "failure_mode": "agent_timeout" if timeout else "unset",
                    "parser_results": {"test_outcome": "passed" if passed else "failed"},
                    "trial_started_at": began.isoformat(),
                    "trial_ended_at": (began + timedelta(seconds=seconds + 60)).isoformat(),
                    "agent_started_at": (began + timedelta(seconds=20)).isoformat(),
                    "agent_ended_at": (began + timedelta(seconds=20 + seconds)).isoformat(),
                }
                folder = run_dir / task / name
                folder.mkdir(parents=True)
                (folder / "results.json").write_text(json.dumps(trial))
    return dataset


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-compare"))
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    db = args.out / "store.duckdb"
    cli = [sys.executable, "-m", "curriculab.cli", "--db", str(db)]
    subprocess.run([*cli, "ingest", str(write_leaderboard(args.out))], check=True, stdout=subprocess.DEVNULL)
    compare = [*cli, "compare", "terminus · claude-sonnet-4", "openhands · claude-sonnet-4", "--json"]
    query = [*cli, "query", "select count(*) from trajectories"]
    timed(query), timed(compare)  # warm the page cache and the interpreter's bytecode once
    pairs = []
    for pair in range(args.pairs):
        sides = [("compare", compare), ("query", query)]
        if pair % 2:
            sides.reverse()
        seconds = {name: timed(command) for name, command in sides}
        pairs.append(seconds)
        print(f"pair {pair + 1}: compare {seconds['compare']:.2f} s, query {seconds['query']:.2f} s", flush=True)
    print(
        json.dumps(
            {
                "trials": 13 * RUNS * TASKS,
                "compare_s": round(statistics.median(p["compare"] for p in pairs), 2),
                "query_s": round(statistics.median(p["query"] for p in pairs), 2),
                "ratio": round(statistics.median(p["compare"] / p["query"] for p in pairs), 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
