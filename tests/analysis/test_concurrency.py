"""A report (or the dashboard) can read while another process ingests into the same store:
DuckDB admits one process at a time, so the ingest steps aside when a reader is waiting."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import Store, StoreError, row_count

pytestmark = pytest.mark.slow  # an ingest and readers in parallel processes

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "curriculab.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, **kwargs
    )


def test_reads_during_an_ingest_see_committed_trajectories_and_the_ingest_finishes(tmp_path):
    corpus = simulate_corpus(tmp_path / "corpus", n_tasks=240, attempts=3, seed=3)
    db = tmp_path / "store.duckdb"
    assert _cli("--db", str(db), "ingest", str(tmp_path / "corpus" / "tasks")).returncode == 0  # the store exists
    ingest = subprocess.Popen(
        [sys.executable, "-m", "curriculab.cli", "--db", str(db), "ingest", "--workers", "1", str(corpus.root)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    deadline = time.monotonic() + 120
    while ingest.poll() is None and time.monotonic() < deadline:
        done = _cli("--db", str(db), "query", "select count(*) as n from trajectories", "--json")
        assert done.returncode == 0, done.stderr
        seen.append(json.loads(done.stdout)[0]["n"])
        if 0 < seen[-1] < corpus.n_trajectories:
            report = _cli("--db", str(db), "report", "--json")
            assert report.returncode == 0, report.stderr
            assert json.loads(report.stdout)["overview"]
            break
        time.sleep(0.2)
    out, err = ingest.communicate(timeout=300)
    assert ingest.returncode == 0, err
    assert any(0 < n < corpus.n_trajectories for n in seen), seen  # we really read in the middle of the ingest
    with Store(db, read_only=True) as store:
        assert row_count(store, "trajectories") == corpus.n_trajectories  # nothing lost to the pauses


def test_a_reader_that_cannot_get_in_says_why(tmp_path):
    db = tmp_path / "held.duckdb"
    Store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(db)!r}); print('held', flush=True); time.sleep(8)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    started = time.monotonic()
    try:
        Store(db, read_only=True, wait_s=1.0)
        raise AssertionError("opened a file another process holds")
    except StoreError as exc:
        assert str(exc).startswith(f"cannot open {db}: IO Error: Could not set lock on file")
        assert str(exc).endswith(
            "Another process is using it (an ingest or a long read); wait for it to finish, or use another --db"
        )
    assert 1.0 <= time.monotonic() - started < 5
    assert not Path(f"{db}.readers-waiting").exists()  # the reader cleaned up after itself
    holder.kill()
