"""kill -9 in the middle of an ingest leaves a store that opens and holds no partial trajectory."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import Store, row_count

pytestmark = pytest.mark.slow  # kill -9 through real ingests

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return simulate_corpus(
        tmp_path_factory.mktemp("crash") / "corpus", n_tasks=300, attempts=5, seed=11
    )  # 4,500 trials


def _consistent(db: Path) -> tuple[int, int]:
    """(trajectories whose steps are not all there + orphan steps, trajectories stored)."""
    with Store(db, read_only=True) as store:
        broken = store.query("""
            select count(*) from trajectories t
            left join (select trajectory_id, count(*) as n from steps group by 1) s using (trajectory_id)
            where coalesce(s.n, 0) <> t.n_steps""").scalar()
        orphans = store.query(
            "select count(*) from steps where trajectory_id not in (select trajectory_id from trajectories)"
        ).scalar()
        return broken + orphans, row_count(store, "trajectories")


def _ingest_then_kill(db: Path, root: Path, when: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "curriculab.cli", "--db", str(db), "ingest", "--workers", "1", str(root)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wal = Path(f"{db}.wal")
    deadline = time.time() + 120
    last = -1
    while time.time() < deadline and proc.poll() is None:
        size = wal.stat().st_size if wal.exists() else 0
        if when == "during commit" and size > 1_000_000:
            break  # the first batch is being written to the WAL right now
        if when == "after commit" and size > 1_000_000 and size == last:
            break  # the first batch's commit finished; the second batch is being read
        last = size
        time.sleep(0.02 if when == "during commit" else 0.3)
    assert proc.poll() is None, "ingest finished before it could be killed; grow the corpus"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("when", ["during commit", "after commit"])
def test_kill_9_mid_ingest_leaves_only_whole_trajectories(tmp_path, corpus, when):
    db = tmp_path / "crash.duckdb"
    _ingest_then_kill(db, corpus.root, when)
    problems, landed = _consistent(db)
    assert problems == 0
    assert landed < corpus.n_trajectories
    if when == "after commit":
        assert landed > 0

    done = subprocess.run(
        [sys.executable, "-m", "curriculab.cli", "--db", str(db), "ingest", str(corpus.root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    problems, landed_after = _consistent(db)
    assert problems == 0 and landed_after == corpus.n_trajectories
