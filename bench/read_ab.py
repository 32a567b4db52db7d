"""CPU per trajectory of ingest's reading (`read_unit`, no store) in this checkout against an earlier
revision, alternated in one invocation on the same corpus.

    python bench/read_ab.py --baseline HEAD~3 [--trajectories 3000] [--pairs 5] [--workdir /tmp/read-ab]

Both sides run at once as two processes, each importing its own revision (`bench/ab.py`) and
reading every unit once to warm imports and the page cache; then they take turns, one chunk of
units at a time (`--chunk`), by process CPU, the order swapped every turn. This VM's speed drifts
by tens of percent within seconds; neighbouring chunks see the same drift, so the ratio of their
sums is stable where two whole passes are not. Prints each pass's ratio (this checkout / baseline),
the median and the spread.
End-to-end ingest is `ingest_ab.py`; this isolates the Python the fast path has to beat.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ab import BASELINE_IMPORTS, baseline_site  # noqa: E402

_READ = """
import json, sys, time
from pathlib import Path
from curriculab.analysis.ingest.pipeline import discover, read_unit
units = discover([Path(sys.argv[1])])[0][:int(sys.argv[2])]
steps = sum(read_unit(unit).batch.n_steps for unit in units)
print(json.dumps({"ready": steps}), flush=True)
for line in sys.stdin:  # "start end": read those units, answer with the CPU seconds it took
    start, end = map(int, line.split())
    started = time.process_time()
    for unit in units[start:end]:
        read_unit(unit)
    print(json.dumps({"cpu_s": time.process_time() - started}), flush=True)
"""


class _Side:
    def __init__(self, site: str | None, corpus: Path, n: int, cwd: Path):
        boot = BASELINE_IMPORTS + "\n" if site else ""
        env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
        self.process = subprocess.Popen(
            [sys.executable, "-c", boot + _READ, str(corpus), str(n)],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"a side failed (exit {self.process.wait()})")
        return json.loads(line)

    def read(self, start: int, end: int) -> float:
        self.process.stdin.write(f"{start} {end}\n")
        self.process.stdin.flush()
        return self.answer()["cpu_s"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="A git revision to compare with (e.g. HEAD~3).")
    parser.add_argument("--trajectories", type=int, default=3000)
    parser.add_argument("--pairs", type=int, default=5, help="Passes over the corpus, each side reading all of it.")
    parser.add_argument("--chunk", type=int, default=100, help="Units a side reads in one turn.")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/read-ab"))
    args = parser.parse_args()

    from curriculab.analysis.simulate import simulate_corpus

    with baseline_site(args.baseline, args.workdir) as site:
        corpus = simulate_corpus(
            args.workdir / "corpus", n_tasks=max(8, args.trajectories // 3 + 1), attempts=3, seed=0
        ).root
        sides = {
            "baseline": _Side(site, corpus, args.trajectories, args.workdir),
            "current": _Side(None, corpus, args.trajectories, args.workdir),
        }
        seen = {name: side.answer()["ready"] for name, side in sides.items()}
        if seen["baseline"] != seen["current"]:
            raise SystemExit(f"the sides read different step counts: {seen}")
        ratios, turn = [], 0
        for pass_ in range(args.pairs):
            cpu = {"baseline": 0.0, "current": 0.0}
            for start in range(0, args.trajectories, args.chunk):
                order = ["baseline", "current"] if turn % 2 == 0 else ["current", "baseline"]
                turn += 1
                for name in order:
                    cpu[name] += sides[name].read(start, start + args.chunk)
            ratios.append(cpu["current"] / cpu["baseline"])
            n = args.trajectories
            print(
                f"pass {pass_ + 1}: baseline {cpu['baseline'] * 1000 / n:.3f} ms, current {cpu['current'] * 1000 / n:.3f} ms "
                f"per trajectory ({ratios[-1]:.3f}×)",
                flush=True,
            )
        for side in sides.values():
            side.close()
        print(
            json.dumps(
                {
                    "baseline": args.baseline,
                    "trajectories": args.trajectories,
                    "pairs": args.pairs,
                    "chunk": args.chunk,
                    "median_ratio": round(statistics.median(ratios), 3),
                    "spread": [round(min(ratios), 3), round(max(ratios), 3)],
                    "steps": seen["current"],
                }
            )
        )


if __name__ == "__main__":
    main()
