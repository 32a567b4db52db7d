"""Ingest never loses a valid record: values the store cannot hold are refused per record where
they are read (and, should one still reach the write, isolated there); a dead reader's marker
does not slow the writer; reader workers die with a killed ingest; one unreadable path does not
stop the rest; NaN and infinities are refused alike in every format; messages say what is wrong."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ATIF = FIXTURES / "atif" / "session-42.json"


def _line(**fields) -> str:
    return json.dumps({"trajectory_id": "t", "run_id": "r", "task_id": "k", "outcome": "failed", **fields}) + "\n"


def _errors(store: Store) -> list[tuple[str, str | None, str | None]]:
    return store.query("select path, record, field from ingest_errors where severity = 'error' order by all").rows


@pytest.mark.parametrize(
    "bad, field",
    [
        (_line(attempt=2**31), "attempt"),
        (_line(steps=[{"step_idx": 0, "source": "agent", "exit_code": 2**31}]), "steps[0].exit_code"),
        (_line(input_tokens=10**30), "input_tokens"),
        (_line(reward=float("nan")), "reward"),
        (_line(reward=float("inf")), "reward"),
        (_line(reward="1.0"), "reward"),
    ],
)
def test_a_value_the_store_cannot_hold_costs_only_its_record(store, tmp_path, bad, field):
    path = tmp_path / "mixed.jsonl"
    path.write_text(bad.replace('"t"', '"bad"', 1) + _line(trajectory_id="good"))
    report = ingest(store, [ATIF, path], workers=1)
    assert report.inserted == 2  # the ATIF file and the good line, in one call with the bad line
    assert _errors(store) == [(str(path), "line 1", field)]
    assert "The store cannot hold that value" in report.errors[0].reason or "valid number" in report.errors[0].reason


@pytest.mark.parametrize(
    "change, field",
    [
        (
            lambda doc: doc["steps"][1].setdefault("metrics", {}).update(prompt_tokens=10**30),
            "steps[1].metrics.prompt_tokens",
        ),
        (
            lambda doc: doc["steps"][1].setdefault("metrics", {}).update(prompt_tokens=-5),
            "steps[1].metrics.prompt_tokens",
        ),
        (
            lambda doc: doc["steps"][1].setdefault("metrics", {}).update(cost_usd=float("inf")),
            "steps[1].metrics.cost_usd",
        ),
        (lambda doc: doc.update(schema_version="ATIF-v9.9"), "schema_version"),
    ],
)
def test_atif_values_are_checked_where_read(store, tmp_path, change, field):
    doc = json.loads(ATIF.read_text())
    change(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc).replace("Infinity", "1e400"))
    report = ingest(store, [bad, FIXTURES / "jsonl"], workers=1)
    assert report.inserted > 0 and [(p, f) for p, _, f in _errors(store)] == [(str(bad), field)]
    assert "unexpected" not in report.errors[0].reason and "Report this" not in report.errors[0].reason


def test_a_record_that_still_fails_at_write_time_is_isolated_there(store):
    from curriculab.analysis.ingest.common import UnitResult, add_trajectory
    from curriculab.analysis.ingest.pipeline import IngestReport, _Writer
    from curriculab.trajectory.model import Trajectory

    # a reader bug that slips a value past validation must still cost only its record
    result = UnitResult()
    good = Trajectory(trajectory_id="good", run_id="r", task_id="k", outcome="passed")
    bad = Trajectory.model_construct(**{**good.model_dump(), "trajectory_id": "bad", "attempt": 2**31})
    add_trajectory(result.batch, good, "h1", "jsonl", "in.jsonl:1")
    add_trajectory(result.batch, bad, "h2", "jsonl", "in.jsonl:2")
    report = IngestReport()
    writer = _Writer(store, report)
    writer.add(result)
    writer.flush()
    writer.record()
    assert report.inserted == 1 and store.query("select trajectory_id from trajectories").rows == [("good",)]
    assert _errors(store) == [("in.jsonl:2", "bad", None)] and "cannot hold a value" in report.errors[0].reason


def test_a_dead_readers_marker_is_ignored_and_removed(store, db_path):
    marker = Path(f"{db_path}.readers-waiting")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    marker.write_text(f"{dead.pid} {time.time()}\n")
    assert not store.readers_waiting() and not marker.exists()
    marker.write_text(f"{os.getpid()} {time.time()}\n")  # a live, fresh waiter
    assert store.readers_waiting()
    stale = time.time() - 60
    os.utime(marker, (stale, stale))  # a live process that stopped renewing it (stopped with Ctrl-Z, say)
    assert not store.readers_waiting() and not marker.exists()


@pytest.mark.slow
def test_reader_workers_die_with_a_killed_ingest(tmp_path):
    import psutil

    inputs = tmp_path / "many"
    inputs.mkdir()
    for k in range(240):  # over the threshold at which ingest reads in worker processes; seconds of reading
        (inputs / f"f{k:03d}.jsonl").write_text("".join(_line(trajectory_id=f"t{k}-{j}") for j in range(400)))
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "curriculab.cli",
            "ingest",
            "--db",
            str(tmp_path / "s.duckdb"),
            "--workers",
            "2",
            str(inputs),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list = []
        while time.monotonic() < deadline and parent.poll() is None:
            workers = [
                p for p in psutil.Process(parent.pid).children(recursive=True) if "spawn_main" in " ".join(p.cmdline())
            ]
            if len(workers) == 2:
                break
            time.sleep(0.05)
        assert len(workers) == 2 and parent.poll() is None, "the ingest never had two reader workers running"
        time.sleep(0.5)  # mid-read
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        _, alive = psutil.wait_procs(workers, timeout=10)
        assert alive == [], [p.cmdline()[:4] for p in alive]
    finally:
        parent.kill()


@pytest.mark.slow
def test_one_unreadable_path_is_quarantined_and_the_rest_land(tmp_path):
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    db = tmp_path / "s.duckdb"
    # root reads any file; without CAP_DAC_OVERRIDE it is refused like any user
    done = subprocess.run(
        [
            "setpriv",
            "--bounding-set",
            "-dac_override,-dac_read_search",
            sys.executable,
            "-m",
            "curriculab.cli",
            "ingest",
            "--db",
            str(db),
            str(locked),
            str(ATIF),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Ingested 1 trajectories" in done.stdout
    assert (
        f"quarantined: {locked}: cannot read file (Permission denied). Check that it exists and is readable"
        in done.stderr
    )


@pytest.mark.parametrize(
    "content, cause",
    [
        (
            "not a database\n",
            "That file is not a curriculab store; pass --db with another path (or move the file away)",
        ),
        (None, "That path is a directory; pass --db with a file path such as ./curriculab.duckdb"),
    ],
)
def test_a_store_that_cannot_be_opened_says_why(tmp_path, content, cause):
    from curriculab.analysis.store import StoreBusy, StoreError

    path = tmp_path / "store.duckdb"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    for read_only in (True, False):
        with pytest.raises(StoreError) as refused:
            Store(path, read_only=read_only)
        assert str(refused.value).endswith(cause) and not isinstance(refused.value, StoreBusy)
        assert "Another process" not in str(refused.value)


@pytest.mark.slow
def test_a_waiting_writer_says_so(tmp_path):
    db = tmp_path / "s.duckdb"
    with Store(db):
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(db)!r}); print('held', flush=True); time.sleep(3)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        notices: list[str] = []
        with Store(db, wait_s=20, on_wait=notices.append):
            pass
        assert notices and "is held by another process" in notices[0] and "waiting up to 20 s" in notices[0]
    finally:
        holder.kill()


@pytest.mark.parametrize("name, data", [("bom.jsonl", _line()), ("bom.json", ATIF.read_text())])
def test_a_byte_order_mark_is_named_in_every_json_reader(store, tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + data.encode())
    report = ingest(store, [path], workers=1)
    assert report.errors[0].reason.endswith(
        "starts with a UTF-8 byte-order mark (BOM), which JSON does not allow. Save the file as UTF-8 without a BOM"
    )


def test_step_messages_are_capped_like_outputs(store, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text(_line(steps=[{"step_idx": 0, "source": "agent", "message": "x" * 300_000}]))
    report = ingest(store, [path], workers=1)
    assert report.inserted == 1 and [w.field for w in report.warnings] == ["steps[0].message"]
    (length,) = store.query("select length(message) from steps").rows[0]
    assert length < 70_000


def test_what_the_bad_input_matrix_found_is_refused_or_reported(store, tmp_path):
    run = tmp_path / "tb"
    shutil.copytree(FIXTURES / "tb" / "2025-08-20__12-00-00", run)
    results = json.loads((run / "results.json").read_text())
    results["results"][0]["is_resolved"] = "yes"  # lax parsing would read this as True
    results["results"][1]["failure_mode"] = "cosmic_ray"
    (run / "results.json").write_text(json.dumps(results))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    report = ingest(store, [run, empty], workers=1)
    reasons = [i.reason for i in report.errors]
    assert any("is_resolved: Input should be a valid boolean (got 'yes')" in r for r in reasons)
    assert any(r.startswith(f"{empty}: file is empty") for r in reasons)
    assert any("failure_mode 'cosmic_ray' is not one Terminal-Bench documents" in w.reason for w in report.warnings)


def test_a_no_op_re_ingest_reads_nothing_and_a_touched_input_is_read_again(store, tmp_path):
    import curriculab.analysis.ingest.pipeline as pipeline

    good = tmp_path / "good"
    for name in ("atif", "jsonl", "tb", "harbor"):
        shutil.copytree(FIXTURES / name, good / name)
    first = ingest(store, [good], workers=1)
    assert first.skipped == 0 and first.inserted > 0
    again = ingest(store, [good], workers=1)
    assert again.skipped == again.units and again.inserted == 0 and again.unchanged == first.inserted
    jsonl = good / "jsonl" / "rollouts.jsonl"
    later = time.time() + 5
    os.utime(jsonl, (later, later))  # touched: its signature changes, so it is read (and found unchanged)
    touched = ingest(store, [good], workers=1)
    assert touched.skipped == touched.units - 1 and touched.inserted == 0 and touched.unchanged == first.inserted
    verified = ingest(store, [good], workers=1, verify=True)
    assert verified.skipped == 0 and verified.unchanged == first.inserted
    jsonl.unlink()
    gone = ingest(store, [good], workers=1)
    assert gone.gone == [str(jsonl)] and store.query("select count(*) from trajectories").scalar() == first.inserted
    assert pipeline.unit_signature(pipeline.Unit("jsonl", tmp_path / "missing.jsonl")) is None


def test_a_harbor_trial_is_signed_by_the_files_it_is_read_from(store, tmp_path):
    """The reader signs a trial from its own look at the files it opens; the parent's stat of the same
    three files gives the same signature, which a change to any of them (or one appearing) changes and
    nothing else in the trial's folder does."""
    import curriculab.analysis.ingest.pipeline as pipeline

    job = tmp_path / "job"
    shutil.copytree(FIXTURES / "harbor" / "jobs" / "2026-10-03__14-30-00", job)
    trial = job / "fix-csv-parser__Tm5bN8c"  # no verifier/ctrf.json
    unit = pipeline.Unit("harbor", trial)
    read, result = pipeline.read_signed(unit, None)
    assert result.batch.trajectories and read == pipeline.unit_signature(unit) and read.startswith("h:")
    assert read.endswith(",-")  # the absent ctrf.json is part of it
    (trial / "trial.log").write_text("more log")
    (trial / "agent" / "notes.txt").write_text("not read")
    assert pipeline.unit_signature(unit) == read
    (trial / "verifier").mkdir(exist_ok=True)
    shutil.copy(next(FIXTURES.glob("harbor/jobs/*/*/verifier/ctrf.json")), trial / "verifier" / "ctrf.json")
    appeared = pipeline.unit_signature(unit)
    assert appeared != read
    later = time.time() + 5
    os.utime(trial / "agent" / "trajectory.json", (later, later))
    assert pipeline.unit_signature(unit) != appeared
    ingest(store, [job], workers=1)
    again = ingest(store, [job], workers=1)
    assert again.skipped == again.units and again.inserted == 0


def test_an_input_given_twice_in_one_call_is_recorded_once_and_skipped_next_time(store, tmp_path):
    jsonl = tmp_path / "rollouts.jsonl"
    shutil.copy(FIXTURES / "jsonl" / "rollouts.jsonl", jsonl)
    first = ingest(store, [jsonl, tmp_path], workers=1)  # the file, and the folder that holds it
    assert first.inserted > 0 and first.errors == []
    assert store.query("select count(*) from ingest_manifest").rows == [(1,)]
    again = ingest(store, [jsonl, tmp_path], workers=1)
    assert again.skipped == again.units == 2 and again.inserted == 0


def test_readers_default_to_the_cores_this_process_may_use():
    import subprocess
    import sys

    probe = "from curriculab.analysis.ingest.pipeline import available_cores; print(available_cores())"
    pinned = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert pinned.stdout.strip() == "1"
    free = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert int(free.stdout) == len(os.sched_getaffinity(0))


def test_a_quarantined_input_is_read_and_reported_again(store, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line(attempt=2**31))
    assert len(ingest(store, [bad], workers=1).errors) == 1
    again = ingest(store, [bad], workers=1)
    assert again.skipped == 0 and len(again.errors) == 1  # never skipped: a refusal is said every time


@pytest.mark.slow
def test_readers_start_for_inputs_that_will_be_read_and_not_for_a_no_op_re_ingest(store, tmp_path, monkeypatch):
    from curriculab.analysis.ingest import pipeline

    corpus = tmp_path / "harbor"
    shutil.copytree(FIXTURES / "harbor", corpus)
    monkeypatch.setattr(pipeline, "_PARALLEL_MIN_UNITS", 2)
    started = []
    real_start = pipeline._Readers._start

    def start(self):
        was = self.pool
        real_start(self)
        if was is None and self.pool is not None:
            started.append(self.workers)

    monkeypatch.setattr(pipeline._Readers, "_start", start)
    first = ingest(store, [corpus], workers=2)
    assert first.inserted >= 2 and first.errors == [] and started == [2]
    started.clear()
    again = ingest(store, [corpus], workers=2)
    assert again.inserted == 0 and again.skipped == again.units and started == []  # nothing to read: no reader started
    (next(corpus.rglob("result.json"))).touch()  # one input changed: read in this process, below the threshold
    touched = ingest(store, [corpus], workers=2)
    assert touched.skipped == touched.units - 1 and started == []


def test_a_trial_that_keeps_only_a_redacted_ctrf_report_has_its_tests_read_once(store, tmp_path):
    """Trials published with redaction keep `verifier/ctrf.redacted.json` (the same CTRF document)
    beside or instead of `ctrf.json`: its tests are read from one report, ctrf.json first, never twice."""
    import curriculab.analysis.ingest.pipeline as pipeline

    job = tmp_path / "job"
    shutil.copytree(FIXTURES / "harbor" / "jobs" / "2026-10-02__09-00-00", job)
    only_redacted, both = job / "fix-csv-parser__Hk3mQ2p", job / "fix-csv-parser__Zr8tW4n"
    (only_redacted / "verifier" / "ctrf.json").rename(only_redacted / "verifier" / "ctrf.redacted.json")
    shutil.copy(both / "verifier" / "ctrf.json", both / "verifier" / "ctrf.redacted.json")
    expected = {
        t: len(
            json.loads(
                (FIXTURES / "harbor" / "jobs" / "2026-10-02__09-00-00" / t / "verifier" / "ctrf.json").read_text()
            )["results"]["tests"]
        )
        for t in (only_redacted.name, both.name)
    }
    report = ingest(store, [job], workers=1)
    assert report.errors == []
    counted = dict(
        store.query(
            "select t.trajectory_id, count(r.test_id) from trajectories t left join test_results r using (trajectory_id) "
            "group by 1"
        ).rows
    )
    assert {t.rsplit("/", 1)[-1]: n for t, n in counted.items()} == expected and all(expected.values())
    # the redacted report is what the trial is signed by, and a no-op re-ingest skips it
    unit = pipeline.Unit("harbor", only_redacted)
    read, _ = pipeline.read_signed(unit, None)
    assert "|verifier/ctrf.redacted.json=" in read and read == pipeline.unit_signature(unit, read)
    again = ingest(store, [job], workers=1)
    assert again.skipped == again.units and again.inserted == 0
