"""What recording the executed commands costs a command (issue #56, "a check is what ran"), in one
process: in one running observing episode, a command with the record (the DEBUG trap armed, its
file read and removed after the command) and the observation of the files after it, against the
same command and observation without the record, alternated pairs; medians and the ratio, per
backend.

    python bench/record_cost.py [--pairs 200] [--backend bwrap] [--backend docker]

Both sides go through the episode's own `_send` and its agent's observation (as `run` does): the
difference is the trap's `printf` per simple command, the marker, and reading the record
(host-side on bubblewrap; on Docker inside the one `docker exec` that lists the files anyway).
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curriculab.training.terminal import Episode, EpisodeLimits, load_task  # noqa: E402
from curriculab.training.terminal.shared import executed_commands  # noqa: E402
from tests.training.terminal_tasks import write_task  # noqa: E402


def pairs_of(episode: Episode, pairs: int) -> tuple[list[float], list[float]]:
    """Seconds of `pairs` alternated commands with the record and without it."""
    agent = episode._agent
    assert agent is not None

    def recorded() -> float:
        nonce, started = secrets.token_hex(8), time.perf_counter()
        episode._send("true", 30, nonce=nonce, record=True)
        record, _, _ = agent.after_command()
        ran, _ = executed_commands(record, nonce, "true")
        assert ran == [("true", 0)], ran
        return time.perf_counter() - started

    def plain() -> float:
        started = time.perf_counter()
        episode._send("trap - DEBUG; true", 30)  # the trap a recorded command left, removed
        agent.files()
        return time.perf_counter() - started

    on: list[float] = []
    off: list[float] = []
    for k in range(pairs):
        for times, side in [(on, recorded), (off, plain)][:: 1 if k % 2 == 0 else -1]:
            times.append(side())
    return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--backend", action="append", choices=["bwrap", "docker", "namespaces"])
    args = parser.parse_args()
    task = load_task(write_task(Path(tempfile.mkdtemp(prefix="record-cost-"))))
    for backend in args.backend or ["bwrap"]:
        with Episode(task, EpisodeLimits(), backend=backend, observe=True) as episode:
            on, off = pairs_of(episode, args.pairs)
        ratio = statistics.median(a / b for a, b in zip(on, off))
        print(
            f"{backend}: with the record {statistics.median(on) * 1e3:.2f} ms, without "
            f"{statistics.median(off) * 1e3:.2f} ms a command; ratio (median of pairs) {ratio:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
