"""Ingest benchmark: `curriculab ingest` vs DuckDB's own `read_json` on the same files, one run.

    python bench/ingest_bench.py [--trajectories 50000] [--workdir bench/out]

Simulates a Harbor corpus (ATIF trajectories + trial results), warms the page cache so neither
side pays for cold reads, then runs each side in its own subprocess while sampling the whole
process tree's resident memory. Prints both wall times, the ratio, and the peak memory.
Goal (issue #2): ingest ≤ 2× read_json, peak memory < 4 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def simulate(corpus: Path, n_trajectories: int) -> dict:
    from curriculab.analysis.simulate import DEFAULT_MODELS, ModelProfile, simulate_corpus

    models = DEFAULT_MODELS + (
        ModelProfile("delta-14b", "claude-code", 0.0, dict(DEFAULT_MODELS[0].rates)),
        ModelProfile("eos-70b", "terminus-2", 0.9, dict(DEFAULT_MODELS[2].rates)),
    )
    attempts = 5
    n_tasks = max(1, n_trajectories // (len(models) * attempts))
    summary = simulate_corpus(corpus, n_tasks=n_tasks, attempts=attempts, seed=7, models=models)
    return {"trajectories": summary.n_trajectories, "tool_calls": summary.n_steps, "tasks": summary.n_tasks}


def measure(cmd: list[str]) -> dict:
    """Wall time and peak resident memory of the whole process tree of `cmd`."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    done.set()
    sampler.join()
    return {
        "seconds": round(elapsed, 2),
        "peak_rss_gib": round(peak / 2**30, 3),
        "rc": proc.returncode,
        "stdout": out,
        "stderr_tail": err[-2000:],
    }


READ_JSON = """
import duckdb, sys
con = duckdb.connect(sys.argv[1])
corpus = sys.argv[2]
con.execute(f"create table raw_trajectories as select * from read_json('{corpus}/jobs/*/*/agent/trajectory.json', maximum_object_size=268435456)")
con.execute(f"create table raw_results as select * from read_json('{corpus}/jobs/*/*/result.json')")
print(con.execute("select count(*) from raw_trajectories").fetchone()[0])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=50_000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    work = args.workdir
    corpus = work / f"corpus-{args.trajectories}"
    work.mkdir(parents=True, exist_ok=True)
    if not (corpus / "ground_truth.csv").exists():
        t = time.perf_counter()
        info = simulate(corpus, args.trajectories)
        print(f"simulated {info} in {time.perf_counter() - t:.1f} s", flush=True)
    files = list(corpus.glob("jobs/*/*/agent/trajectory.json")) + list(corpus.glob("jobs/*/*/result.json"))
    size = sum(f.stat().st_size for f in files)
    for f in files:  # warm the page cache for both contenders
        f.read_bytes()
    print(f"{len(files)} files, {size / 2**20:.0f} MiB, page cache warm", flush=True)

    results = {}
    for name, cmd, db in [
        ("read_json", [sys.executable, "-c", READ_JSON], work / "raw.duckdb"),
        ("curriculab_ingest", [sys.executable, "-m", "curriculab.cli", "ingest", "--json"], work / "ingest.duckdb"),
    ]:
        for stale in (db, Path(f"{db}.wal")):
            stale.unlink(missing_ok=True)
        full = cmd + [str(db), str(corpus)] if name == "read_json" else cmd + ["--db", str(db), str(corpus)]
        results[name] = measure(full)
        print(name, {k: results[name][k] for k in ("seconds", "peak_rss_gib", "rc")}, flush=True)
        if results[name]["rc"] != 0:
            print(results[name]["stderr_tail"], file=sys.stderr)
            sys.exit(1)
    summary = json.loads(results["curriculab_ingest"]["stdout"])
    ratio = results["curriculab_ingest"]["seconds"] / results["read_json"]["seconds"]
    print(
        json.dumps(
            {
                "trajectories": args.trajectories,
                "files": len(files),
                "mib": round(size / 2**20),
                "trajectories_ingested": summary["inserted"],
                "steps_ingested": summary["steps"],
                "read_json_s": results["read_json"]["seconds"],
                "read_json_peak_gib": results["read_json"]["peak_rss_gib"],
                "ingest_s": results["curriculab_ingest"]["seconds"],
                "ingest_peak_gib": results["curriculab_ingest"]["peak_rss_gib"],
                "ratio_ingest_over_read_json": round(ratio, 3),
                "goal": "ratio <= 2.0, ingest peak < 4 GiB",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
