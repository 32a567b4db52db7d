"""Terminal episodes against Docker's own costs, in one process (issue #45):

    python bench/episode_bench.py [--pairs 200] [--starts 20] [--rounds 3] [--workers 8]

1. A command's round trip: `episode.run("true")` in a running bubblewrap episode against
   `exec_run(["true"])` into a running container of the same tools (the host-tools image), through
   the SDK (no CLI start), alternated pairs; medians. Goal ≤ 0.1×.
2. An episode's start (files laid out, shell up and answering, the Dockerfile's RUN replayed)
   against starting a container from a present image (create + start), alternated, the one before
   removed first (untimed); medians. Goal ≤ 0.2×. Back to back by default, as training starts them;
   `--settle S` idles S seconds before each (the daemon's cleanup done, but a cold CPU: a 14 ms
   start becomes ~28 ms after 0.3 s idle on this machine, a container start much less so).
3. Throughput: the built-in suite's first `--workers` tasks, each an oracle episode (solution run,
   verifier judged, reward checked = 1), all at once on threads against one after another,
   alternated rounds; episodes per second.

The Docker backend's own round trip and start are printed beside them (context, not a goal).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curriculab.training.terminal import Episode, EpisodeLimits, load_task  # noqa: E402
from curriculab.training.terminal.docker import client, host_tools_image  # noqa: E402
from curriculab.training.terminal.suite import BUILTIN_SUITE  # noqa: E402


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def round_trips(pairs: int, docker_client, image: str, task) -> dict:  # type: ignore[no-untyped-def]
    container = docker_client.containers.run(image, ["/bin/cat"], stdin_open=True, detach=True, network_disabled=True)
    episode, docker_episode = Episode(task), Episode(task, backend="docker", docker_client=docker_client)
    ours, theirs, docker_ours = [], [], []
    try:
        for index in range(pairs):
            order = [
                (ours, lambda: episode.run("true")),
                (theirs, lambda: container.exec_run(["true"])),
                (docker_ours, lambda: docker_episode.run("true")),
            ]
            for sink, action in order if index % 2 == 0 else order[::-1]:
                sink.append(_timed(action))
    finally:
        episode.close()
        docker_episode.close()
        container.remove(force=True)
    return {
        "bwrap_episode_ms": statistics.median(ours) * 1e3,
        "docker_exec_ms": statistics.median(theirs) * 1e3,
        "docker_episode_ms": statistics.median(docker_ours) * 1e3,
    }


def starts(count: int, docker_client, image: str, task, settle: float) -> dict:  # type: ignore[no-untyped-def]
    def episode():  # type: ignore[no-untyped-def]
        return Episode(task)

    def container():  # type: ignore[no-untyped-def]
        return docker_client.containers.run(image, ["/bin/cat"], stdin_open=True, detach=True)

    def docker_episode():  # type: ignore[no-untyped-def]
        return Episode(task, backend="docker", docker_client=docker_client)

    samples: dict[str, list[float]] = {"ours": [], "theirs": [], "docker_ours": []}
    for index in range(count):
        order = [("ours", episode), ("theirs", container), ("docker_ours", docker_episode)]
        for name, action in order if index % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            made = action()
            samples[name].append(time.perf_counter() - started)
            made.close() if isinstance(made, Episode) else made.remove(force=True)  # not timed
            time.sleep(settle)
    return {
        "bwrap_episode_ms": statistics.median(samples["ours"]) * 1e3,
        "container_start_ms": statistics.median(samples["theirs"]) * 1e3,
        "docker_episode_ms": statistics.median(samples["docker_ours"]) * 1e3,
    }


def _oracle_episode(path: Path) -> float:
    task = load_task(path)
    with Episode(task, EpisodeLimits(), oracle=True) as episode:
        while not episode.finished:
            episode.run("bash /solution/solve.sh")
            episode.end_step()
        reward = episode.finish().reward
    if reward != 1.0:
        raise AssertionError(f"{path.name}: the oracle scored {reward}, not 1")
    return reward


def throughput(rounds: int, workers: int) -> dict:
    paths = sorted(p.parent for p in BUILTIN_SUITE.glob("*/task.toml"))[:workers]
    together, apart = [], []
    for index in range(rounds):

        def concurrent() -> None:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(_oracle_episode, paths))

        def sequential() -> None:
            for path in paths:
                _oracle_episode(path)

        order = [(together, concurrent), (apart, sequential)]
        for sink, action in order if index % 2 == 0 else order[::-1]:
            sink.append(len(paths) / _timed(action))
    return {
        "concurrent_per_s": statistics.median(together),
        "sequential_per_s": statistics.median(apart),
        "episodes": len(paths),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--settle", type=float, default=0.0, help="seconds idle before each start")
    args = parser.parse_args()
    docker_client = client()
    if docker_client is None:
        sys.exit("no Docker daemon answers: the baselines are Docker's own costs (start dockerd)")
    image = host_tools_image(docker_client)
    task = load_task(BUILTIN_SUITE / "count-error-lines")
    trip = round_trips(args.pairs, docker_client, image, task)
    print(
        f"round trip of `true`: bwrap episode {trip['bwrap_episode_ms']:.2f} ms, docker exec {trip['docker_exec_ms']:.2f} ms "
        f"-> {trip['bwrap_episode_ms'] / trip['docker_exec_ms']:.3f}x (goal <= 0.1x); "
        f"docker episode {trip['docker_episode_ms']:.2f} ms ({trip['docker_episode_ms'] / trip['docker_exec_ms']:.3f}x)"
    )
    start = starts(args.starts, docker_client, image, task, args.settle)
    print(
        f"start{f' (after {args.settle:g} s idle)' if args.settle else ' (back to back)'}: bwrap episode {start['bwrap_episode_ms']:.1f} ms, container start {start['container_start_ms']:.1f} ms "
        f"-> {start['bwrap_episode_ms'] / start['container_start_ms']:.3f}x (goal <= 0.2x); "
        f"docker episode {start['docker_episode_ms']:.1f} ms ({start['docker_episode_ms'] / start['container_start_ms']:.2f}x)"
    )
    rate = throughput(args.rounds, args.workers)
    print(
        f"{rate['episodes']} oracle episodes, every reward 1: {rate['concurrent_per_s']:.2f}/s at once, "
        f"{rate['sequential_per_s']:.2f}/s one after another -> {rate['concurrent_per_s'] / rate['sequential_per_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
