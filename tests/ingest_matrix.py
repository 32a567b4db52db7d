"""Bad input against ingest, as a careless user and an attacker would give it: does any call abort,
lose a valid record, or call bad input an internal bug?

    python tests/ingest_matrix.py [--workdir /tmp/ingest-matrix]

Each case copies the good fixtures (every format), adds or damages one input, and runs the real
`curriculab ingest` command in a fresh store. A case passes when the command exits 0 or 1 (never
a crash), every trajectory of the good inputs is in the store (counted against a clean ingest of
them), the damage is in `ingest_errors` or a warning (never silence), and no message says
"unexpected" or "Report this". Cases: value mutations of each format's fields (out-of-range
integers, NaN/Infinity, strings for numbers, negative counts, huge texts, wrong versions),
broken files (truncated, not UTF-8, a BOM, empty), paths (missing, unreadable without root's
override, a FIFO, a symlink loop, an empty directory), kill -9 at moments through the ingest
(then a re-ingest must complete the store with every trajectory once), and a stale reader marker.
Prints one line per failing case and a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
GOOD = ("atif", "harbor", "jsonl", "swe-agent", "tb")


def run(
    db: Path, *paths: Path, extra: tuple[str, ...] = (), prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "curriculab.cli", "ingest", "--db", str(db), *extra, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def count(db: Path, sql: str) -> int:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def good_copy(work: Path) -> Path:
    target = work / "good"
    for name in GOOD:
        shutil.copytree(FIXTURES / name, target / name)
    return target


def value_cases() -> dict[str, Callable[[Path], Path]]:
    """name → a function that writes one damaged input under the good tree and returns it."""
    jsonl_line = {"trajectory_id": "bad-1", "run_id": "r", "task_id": "k", "outcome": "failed"}
    jsonl_values = {
        "attempt=2**31": {"attempt": 2**31},
        "attempt=-1": {"attempt": -1},
        "input_tokens=10**30": {"input_tokens": 10**30},
        "output_tokens=-5": {"output_tokens": -5},
        "reward=NaN": {"reward": float("nan")},
        "reward=Infinity": {"reward": float("inf")},
        "reward='1.0'": {"reward": "1.0"},
        "cost_usd=-1": {"cost_usd": -1},
        "cost_usd=Infinity": {"cost_usd": float("inf")},
        "milestones_total=2**40": {"milestones_total": 2**40},
        "outcome='won'": {"outcome": "won"},
        "step exit_code=2**31": {"steps": [{"step_idx": 0, "source": "agent", "exit_code": 2**31}]},
        "step_idx gap": {"steps": [{"step_idx": 1, "source": "agent"}]},
        "step message 300 KB": {"steps": [{"step_idx": 0, "source": "agent", "message": "m" * 300_000}]},
        "test milestone_idx=2**31": {"test_results": [{"test_id": "t", "passed": True, "milestone_idx": 2**31}]},
        "test tier 'expert'": {"test_results": [{"test_id": "t", "passed": True, "tier": "expert"}]},
        "unknown key": {"rewrd": 1.0},
        "format_version 9.0": {"format_version": "9.0"},
    }
    cases: dict[str, Callable[[Path], Path]] = {}
    for name, fields in jsonl_values.items():

        def write(good: Path, fields=fields) -> Path:
            path = good / "jsonl" / "zz-bad.jsonl"
            path.write_text(json.dumps({**jsonl_line, **fields}) + "\n")
            return path

        cases[f"jsonl {name}"] = write
    atif_changes: dict[str, Callable[[dict], None]] = {
        "prompt_tokens=10**30": lambda d: d["steps"][1].setdefault("metrics", {}).update(prompt_tokens=10**30),
        "prompt_tokens=-5": lambda d: d["steps"][1].setdefault("metrics", {}).update(prompt_tokens=-5),
        "cost_usd=Infinity": lambda d: d["steps"][1].setdefault("metrics", {}).update(cost_usd=float("inf")),
        "total_cost_usd=NaN": lambda d: d.setdefault("final_metrics", {}).update(total_cost_usd=float("nan")),
        "schema_version ATIF-v9.9": lambda d: d.update(schema_version="ATIF-v9.9"),
        "step_id=-1": lambda d: d["steps"][0].update(step_id=-1),
        "source 'robot'": lambda d: d["steps"][0].update(source="robot"),
        "steps missing": lambda d: d.pop("steps"),
        "message 300 KB": lambda d: d["steps"][0].update(message="m" * 300_000),
        "extra.reward='x'": lambda d: d.setdefault("extra", {}).update(reward="x"),
    }
    for name, change in atif_changes.items():

        def write(good: Path, change=change) -> Path:
            path = good / "atif" / "zz-bad.json"
            doc = json.loads((FIXTURES / "atif" / "session-42.json").read_text())
            doc["session_id"] = "zz-bad"
            change(doc)
            path.write_text(json.dumps(doc))
            return path

        cases[f"atif {name}"] = write
    tb_changes: dict[str, Callable[[dict], None]] = {
        "total_input_tokens=10**30": lambda r: r.update(total_input_tokens=10**30),
        "total_output_tokens=-1": lambda r: r.update(total_output_tokens=-1),
        "is_resolved='yes'": lambda r: r.update(is_resolved="yes"),
        "parser_results status 'maybe'": lambda r: r.update(parser_results={"t": "maybe"}),
        "failure_mode 'cosmic_ray'": lambda r: r.update(failure_mode="cosmic_ray"),
        "trial_started_at 'yesterday'": lambda r: r.update(trial_started_at="yesterday"),
    }
    for name, change in tb_changes.items():

        def write(good: Path, change=change) -> Path:
            path = good / "tb" / "2025-08-20__12-00-00" / "results.json"
            doc = json.loads(path.read_text())
            change(doc["results"][0])
            path.write_text(json.dumps(doc))
            return path

        cases[f"tb {name}"] = write
    harbor_changes: dict[str, Callable[[dict], None]] = {
        "reward=NaN": lambda r: r.setdefault("verifier_result", {}).update(rewards={"reward": float("nan")}),
        "n_input_tokens=10**30": lambda r: r.setdefault("agent_result", {}).update(n_input_tokens=10**30),
        "task_name missing": lambda r: r.pop("task_name"),
        "started_at 'soon'": lambda r: r.update(started_at="soon"),
    }
    for name, change in harbor_changes.items():

        def write(good: Path, change=change) -> Path:
            path = sorted(good.glob("harbor/jobs/*/*/result.json"))[0]  # a trial's, not the job's
            doc = json.loads(path.read_text())
            change(doc)
            path.write_text(json.dumps(doc))
            return path

        cases[f"harbor {name}"] = write
    for fmt, relative in (("jsonl", "jsonl/rollouts.jsonl"), ("atif", "atif/session-42.json")):

        def truncated(good: Path, relative=relative) -> Path:
            path = good / relative
            path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
            return path

        def not_utf8(good: Path, relative=relative) -> Path:
            path = good / relative
            path.write_bytes(path.read_bytes().replace(b"a", b"\xff", 1))
            return path

        def bom(good: Path, relative=relative) -> Path:
            path = good / relative
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
            return path

        def empty(good: Path, relative=relative) -> Path:
            path = good / relative
            path.write_bytes(b"")
            return path

        cases.update(
            {f"{fmt} truncated": truncated, f"{fmt} not UTF-8": not_utf8, f"{fmt} BOM": bom, f"{fmt} empty": empty}
        )
    return cases


def check(
    work: Path, name: str, damage: Callable[[Path], Path], expected: int, prefix: tuple[str, ...] = ()
) -> list[str]:
    case = work / name.replace(" ", "_").replace("/", "_").replace("*", "")[:60]
    good = good_copy(case)
    damaged = damage(good)
    db = case / "store.duckdb"
    done = run(db, good, prefix=prefix)
    problems = []
    if done.returncode not in (0, 1):
        problems.append(f"aborted (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    text = done.stdout + done.stderr
    if re.search(r"unexpected [A-Z]\w*(Error|Exception)", text) or "Report this" in text or "Traceback" in text:
        problems.append("an internal-bug message for bad input")
    if db.exists():
        stored = count(db, "select count(*) from trajectories")
        if stored < expected - _damaged_records(damaged, good):
            problems.append(f"valid records lost: {stored} stored of {expected} good")
        if count(db, "select count(*) from ingest_errors") == 0:
            problems.append("the damage was not recorded")
    return problems


def _damaged_records(damaged: Path, good: Path) -> int:
    """How many good trajectories the damaged file itself held (they may rightly be refused)."""
    if damaged.name.startswith("zz-bad"):
        return 0
    if damaged.suffix == ".jsonl":
        return len((FIXTURES / damaged.relative_to(good)).read_text().splitlines())
    if damaged.name == "results.json" and damaged.parent.name.startswith("2025"):
        return 1  # one trial of the run was damaged
    return 1


def path_cases(work: Path, expected: int) -> dict[str, list[str]]:
    out = {}
    base = work / "paths"
    good = good_copy(base)
    missing = base / "missing.json"
    fifo = base / "fifo.json"
    os.mkfifo(fifo)
    loop = base / "loop"
    loop.mkdir()
    (loop / "again").symlink_to(loop)
    empty = base / "empty"
    empty.mkdir()
    locked = base / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    locked_dir = base / "locked-dir"
    locked_dir.mkdir()
    shutil.copy(FIXTURES / "atif" / "session-42.json", locked_dir / "x.json")
    locked_dir.chmod(0)
    drop_root = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")
    for name, paths, prefix in (
        ("missing path", [missing], ()),
        ("a FIFO", [fifo], ()),
        ("a symlink loop", [loop], ()),
        ("an empty directory", [empty], ()),
        ("an unreadable file", [locked], drop_root),
        ("an unreadable directory", [locked_dir], drop_root),
    ):
        db = base / f"{name.replace(' ', '_')}.duckdb"
        done = run(db, good, *paths, prefix=prefix)
        problems = []
        if done.returncode != 1:
            problems.append(f"exit {done.returncode}, expected 1: {done.stderr.strip().splitlines()[-1:]}")
        if db.exists() and count(db, "select count(*) from trajectories") != expected:
            problems.append("valid records lost")
        if re.search(r"unexpected [A-Z]\w*(Error|Exception)|Report this", done.stdout + done.stderr):
            problems.append("an internal-bug message")
        out[f"path: {name}"] = problems
    return out


def kill_cases(work: Path, expected: int) -> dict[str, list[str]]:
    out = {}
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4):
        case = work / f"kill-{delay}"
        good = good_copy(case)
        db = case / "store.duckdb"
        process = subprocess.Popen(
            [sys.executable, "-m", "curriculab.cli", "ingest", "--db", str(db), str(good)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done = run(db, good)
        problems = []
        if done.returncode not in (0, 1):
            problems.append(f"re-ingest aborted (exit {done.returncode})")
        stored = count(db, "select count(*) from trajectories")
        distinct = count(db, "select count(distinct trajectory_id) from trajectories")
        orphans = count(
            db,
            "select count(*) from steps s where not exists (select 1 from trajectories t "
            "where t.trajectory_id = s.trajectory_id)",
        )
        if stored != expected or distinct != stored or orphans:
            problems.append(
                f"after re-ingest: {stored} stored ({distinct} distinct, {orphans} orphan steps), expected {expected}"
            )
        out[f"kill -9 after {delay} s"] = problems
    return out


def stale_marker_case(work: Path, expected: int) -> dict[str, list[str]]:
    case = work / "stale"
    good = good_copy(case)
    db = case / "store.duckdb"
    run(db, FIXTURES / "jsonl")
    clean_started = time.perf_counter()
    run(db, good)
    clean = time.perf_counter() - clean_started
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    Path(f"{db}.readers-waiting").write_text(f"{dead.pid} {time.time()}\n")
    fresh = case / "store2.duckdb"
    run(fresh, FIXTURES / "jsonl")
    Path(f"{fresh}.readers-waiting").write_text(f"{dead.pid} {time.time()}\n")
    started = time.perf_counter()
    run(fresh, good)
    poisoned = time.perf_counter() - started
    problems = (
        []
        if poisoned < 3 * clean + 1
        else [f"ingest with a dead reader's marker took {poisoned:.1f} s vs {clean:.1f} s"]
    )
    return {"a dead reader's marker": problems}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ingest-matrix"))
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    clean = args.workdir / "clean"
    run(clean / "store.duckdb", good_copy(clean))
    expected = count(clean / "store.duckdb", "select count(*) from trajectories")
    results: dict[str, list[str]] = {}
    for name, damage in value_cases().items():
        results[name] = check(args.workdir, name, damage, expected)
    results.update(path_cases(args.workdir, expected))
    results.update(kill_cases(args.workdir, expected))
    results.update(stale_marker_case(args.workdir, expected))
    for name, problems in results.items():
        if problems:
            print(f"FAIL {name}: {'; '.join(problems)}")
    failed = [n for n, p in results.items() if p]
    print(
        json.dumps(
            {
                "cases": len(results),
                "good_trajectories": expected,
                "failed": len(failed),
                "aborted": sum(any(p.startswith("aborted") for p in ps) for ps in results.values()),
                "valid_records_lost": sum(any("lost" in p for p in ps) for ps in results.values()),
                "internal_bug_messages": sum(any("internal-bug" in p for p in ps) for ps in results.values()),
            }
        )
    )


if __name__ == "__main__":
    main()
