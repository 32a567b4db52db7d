"""What scoring through a Docker engine over TCP with mutual TLS costs against the same engine on its
Unix socket and against bubblewrap, warm, in one process (issue #21, item 4; issue #67, item 6).

    python bench/docker_remote.py [--completions 64] [--pairs 3]

Each pair runs every side once, in an order that rotates, on warm slots (each side first scores a
batch to start them). The figure is the median wall time per completion of each side, and its ratio
to bubblewrap's. Needs a dockerd on its Unix socket (`scripts/setup.sh` starts one so); the TCP side
goes through a mutual-TLS listener the bench starts itself (`tests/docker_tls.py`, certificates made
for the run), as DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH reach a remote engine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TESTS = [
    ("t1", "assert add(1, 2) == 3"),
    ("t2", "assert add(-4, 4) == 0"),
    ("t3", "assert add(10**20, 1) == 10**20 + 1"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from curriculab.training.sandbox.runner import Limits
    from tests.docker_tls import tls_docker

    limits = Limits()
    jobs = [
        ("def add(a, b):\n    return a + b\n" if i % 2 else "def add(a, b):\n    return a - b\n", "add", TESTS)
        for i in range(args.completions)
    ]
    with tempfile.TemporaryDirectory(prefix="curriculab-bench-tls-") as folder, tls_docker(Path(folder)) as remote:
        compare(args, jobs, limits, remote)


def compare(args: argparse.Namespace, jobs: list, limits: object, remote: dict[str, str]) -> None:
    from curriculab.training.sandbox import runner
    from curriculab.training.sandbox.runner import close_pools, run_many

    sides = {
        "bwrap": ("bwrap", {}),
        "docker unix socket": ("docker", {"DOCKER_HOST": "unix:///var/run/docker.sock"}),
        "docker over TCP, mutual TLS": ("docker", remote),
    }

    def use(env: dict[str, str]) -> None:
        close_pools()  # each side's slots belong to its own engine address
        runner._DOCKER = None
        for name in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
            os.environ.pop(name, None)
        os.environ.update(env)

    def score(backend: str) -> float:
        started = time.perf_counter()
        results = run_many(jobs, limits, workers=args.workers, backend=backend)
        elapsed = time.perf_counter() - started
        passed = sum(all(o.passed for o in r.outcomes) for r in results)
        assert passed == args.completions // 2, f"{backend}: {passed} passed"
        return elapsed / args.completions

    per_completion: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for pair in range(args.pairs):
        order = names[pair % len(names) :] + names[: pair % len(names)]
        for name in order:
            backend, env = sides[name]
            use(env)
            score(backend)  # warm the slots
            per_completion[name].append(score(backend))
        print(f"pair {pair + 1}: " + ", ".join(f"{n} {per_completion[n][-1] * 1000:.1f} ms" for n in names), flush=True)
    close_pools()
    base = statistics.median(per_completion["bwrap"])
    print(f"\n{args.completions} completions × {len(TESTS)} tests, {args.workers} warm slots, median of {args.pairs}:")
    for name in names:
        median = statistics.median(per_completion[name])
        print(f"  {name:20s} {median * 1000:7.2f} ms per completion  {median / base:5.2f}× bwrap")


if __name__ == "__main__":
    main()
