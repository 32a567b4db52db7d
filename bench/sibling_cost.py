"""What running the agent's programs in a sandbox of their own (`training.terminal.sibling`) costs per
program, on each backend: a verifier that runs the agent's `python3 -c pass` N times through the
suite's `milestones.run`, judged with the harness's sibling offered and with it withheld (the
checker then runs them itself, as under a foreign harness), alternated, the order swapped every pair.

    python bench/sibling_cost.py [--backends bwrap,namespaces,docker] [--calls 10] [--pairs 3]

Prints, per backend, the median verifier time of each side and the median of (on - off) / N: the
added time per program the checks run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from curriculab.training.terminal import Episode, EpisodeLimits, load_task, sibling  # noqa: E402
from curriculab.training.terminal.suite import BUILTIN_SUITE  # noqa: E402

CHECK = """from milestones import finish, run
finish({{"ran": lambda: all(run("python3", "-c", "pass").returncode == 0 for _ in range({calls}))}})
"""


def task(root: Path, calls: int) -> Path:
    folder = root / "runs-programs"
    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "task.toml").write_text('version = "1.0"\n\n[metadata]\ndifficulty = "easy"\nmilestones = ["ran"]\n')
    (folder / "instruction.md").write_text("Nothing to do.\n")
    (folder / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\npython3 /tests/check.py\n")
    (folder / "tests" / "check.py").write_text(CHECK.format(calls=calls))
    (folder / "tests" / "milestones.py").write_text((BUILTIN_SUITE / "milestones.py").read_text())
    return folder


def judged(path: Path, backend: str, offered: bool) -> float:
    sibling.ENV_VAR = "CURRICULAB_RUN" if offered else "CURRICULAB_NOT_OFFERED"
    with Episode(load_task(path), EpisodeLimits(), backend=backend) as episode:
        episode.run("true")
        started = time.perf_counter()
        result = episode.finish()
    if result.reward != 1.0:
        raise SystemExit(f"{backend}: the verifier failed: {result.steps[0].output[-500:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="bwrap,namespaces,docker")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        path = task(Path(root), args.calls)
        for backend in args.backends.split(","):
            judged(path, backend, True)  # warm (page cache, the Docker image)
            on: list[float] = []
            off: list[float] = []
            for k in range(args.pairs):
                sides = [(on, True), (off, False)]
                for times, offered in sides if k % 2 == 0 else sides[::-1]:
                    times.append(judged(path, backend, offered))
            per = statistics.median((a - b) / args.calls for a, b in zip(on, off))
            print(
                f"{backend}: verifier with the sibling {statistics.median(on):.2f} s, without "
                f"{statistics.median(off):.2f} s ({args.calls} programs); {per * 1000:.0f} ms more per program",
                flush=True,
            )


if __name__ == "__main__":
    main()
