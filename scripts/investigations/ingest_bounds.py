"""How far one-core ingest can come toward `read_json` without its step rows: three ingests and
`read_json`, rotated, each against `read_json` of the same round.

    python scripts/investigations/ingest_bounds.py [--trajectories 20000] [--rounds 3] [--workdir /tmp/ingest-cores]

- `ingest`: `curriculab ingest --workers 1`, as it is.
- `steps_unwritten`: the same, the ATIF steps walked (every call normalised, every check made) but
  their rows dropped before the write: what the walk costs apart from writing steps.
- `no_walk`: the same, the ATIF walk skipped: every trial lands with its verdict, tokens and tests
  and no steps. What ingest costs without its per-call Python.
The two bounds are not features (they store less); they say where the remaining time is. All four
run pinned to one core, every corpus file read just before each (`ingest_cores.warm`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ingest_bench import simulate  # noqa: E402
from ingest_cores import READ_JSON_THREADS, timed, warm  # noqa: E402

_CLI = "import sys; from curriculab.cli import cli; cli(sys.argv[1:])"
BOUNDS = {
    "ingest": _CLI,
    "steps_unwritten": "import curriculab.analysis.ingest.atif as a; walk = a._walk\n"
    "def walked(*args):\n    read = walk(*args); read.steps.rows.clear(); return read\n"
    "a._walk = walked\n" + _CLI,
    "no_walk": "import curriculab.analysis.ingest.atif as a; a._walk_document = lambda *args: None\n" + _CLI,
}


def run(name: str, corpus: Path, work: Path) -> float:
    warm(corpus)
    db = work / f"bound-{name}.duckdb"
    for stale in (db, Path(f"{db}.wal")):
        stale.unlink(missing_ok=True)
    pin = ["taskset", "-c", "0"]
    if name == "read_json":
        wall, _, _ = timed(pin + [sys.executable, "-c", READ_JSON_THREADS, str(db), str(corpus), "1"])
    else:
        wall, _, out = timed(
            pin
            + [sys.executable, "-c", BOUNDS[name], "ingest", "--json", "--workers", "1", "--db", str(db), str(corpus)]
        )
        if json.loads(out)["errors"]:
            sys.exit(f"{name}: ingest refused inputs")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ingest-cores"))
    args = parser.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"corpus-{args.trajectories}"
    if not (corpus / "ground_truth.csv").exists():
        print(f"simulated {simulate(corpus, args.trajectories)}", flush=True)
    sides = [*BOUNDS, "read_json"]
    ratios: dict[str, list[float]] = {name: [] for name in BOUNDS}
    for round_ in range(args.rounds):
        order = sides[round_ % len(sides) :] + sides[: round_ % len(sides)]
        walls = {name: run(name, corpus, work) for name in order}
        for name in BOUNDS:
            ratios[name].append(walls[name] / walls["read_json"])
        print(f"round {round_ + 1}: " + ", ".join(f"{name} {walls[name]:.2f} s" for name in order), flush=True)
    print(
        json.dumps(
            {
                "trajectories": args.trajectories,
                "rounds": args.rounds,
                "over_read_json": {
                    name: {"median": round(statistics.median(r), 3), "spread": [round(min(r), 3), round(max(r), 3)]}
                    for name, r in ratios.items()
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
