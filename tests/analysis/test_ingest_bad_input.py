"""Bad input is quarantined with a reason naming file, record and field; nothing valid is lost."""

import json
import shutil

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.ingest.common import MAX_OUTPUT_CHARS
from curriculab.analysis.store import row_count

TRIAL = "harbor/jobs/2026-10-02__09-00-00/fix-csv-parser__Hk3mQ2p"


def reasons(report):
    return [i.reason for i in report.errors]


def stored_errors(store):
    return store.query("select path, reason, record, field, severity from ingest_errors order by seen_at, path").rows


@pytest.fixture
def good(tmp_path, formats):
    """A copy of the valid format samples; tests add bad files beside them."""
    root = tmp_path / "input"
    for folder in formats:
        shutil.copytree(folder, root / folder.name)
    return root


def ingest_and_check_good_kept(store, root, expected_errors):
    report = ingest(store, [root], workers=1)
    assert len(report.errors) == expected_errors, reasons(report)
    # every valid fixture trajectory still landed
    assert (
        store.query(
            "select count(*) from trajectories where trajectory_id in ('fix-csv-parser__Cx2dE9f', "
            "'rl-step120-p17-0', 'atif-standalone-42', 'gpt4o-run/astropy__astropy-12907')"
        ).scalar()
        == 4
    )
    assert len(stored_errors(store)) == expected_errors + len(report.warnings)
    return report


def _kept_without_steps(store, report, path):
    """A trial whose trajectory cannot be read keeps its verdict, tokens and tests, with no steps."""
    (warning,) = [w.reason for w in report.warnings if w.path == str(path)]
    assert store.query(
        "select outcome, reward, input_tokens, n_steps from trajectories "
        "where trajectory_id = 'fix-csv-parser__Hk3mQ2p'"
    ).rows == [("passed", 1.0, 9350, 0)]
    assert store.query("select count(*) from test_results where trajectory_id = 'fix-csv-parser__Hk3mQ2p'").scalar() > 0
    return warning


def test_a_truncated_trajectory_costs_the_steps_not_the_verdict(store, good):
    path = good / TRIAL / "agent" / "trajectory.json"
    path.write_bytes(path.read_bytes()[:700])
    warning = _kept_without_steps(store, ingest_and_check_good_kept(store, good, 0), path)
    assert warning.startswith(f"{path}: record fix-csv-parser__Hk3mQ2p: not ATIF: not JSON (invalid JSON")
    assert warning.endswith(
        "(the file looks truncated)); stored the trial's verdict, tokens and tests without steps. "
        "Convert the trajectory to ATIF if its steps matter"
    )


def test_invalid_json_in_a_standalone_file(store, good):
    bad = good / "atif" / "broken.json"
    bad.write_text('{"schema_version": "ATIF-v1.4", "session_id": oops, "steps": []}')
    (reason,) = reasons(ingest_and_check_good_kept(store, good, 1))
    assert reason.startswith(f"{bad}: invalid JSON") and reason.endswith("Re-export the file or fix it by hand")


def test_wrong_type_names_the_field(store, good):
    path = good / TRIAL / "agent" / "trajectory.json"
    doc = json.loads(path.read_text())
    doc["steps"][2]["step_id"] = "three"
    path.write_text(json.dumps(doc))
    warning = _kept_without_steps(store, ingest_and_check_good_kept(store, good, 0), path)
    assert warning == (
        f"{path}: record fix-csv-parser__Hk3mQ2p: not ATIF: a JSON object with keys agent, "
        "final_metrics, schema_version, session_id, steps (field steps[2].step_id: Input should be a valid "
        "integer, unable to parse string as an integer (got 'three')); stored the trial's verdict, tokens "
        "and tests without steps. Convert the trajectory to ATIF if its steps matter"
    )


def test_a_standalone_atif_file_with_a_wrong_type_is_quarantined(store, good):
    path = good / "atif" / "session-42.json"  # no trial around it, no verdict to keep
    doc = json.loads(path.read_text())
    doc["steps"][1]["step_id"] = "two"
    path.write_text(json.dumps(doc))
    report = ingest(store, [good], workers=1)
    assert reasons(report) == [
        f"{path}: field steps[1].step_id: Input should be a valid integer, unable to "
        "parse string as an integer (got 'two'). Fix the value to match the format's schema"
    ]


def test_missing_required_field(store, good):
    path = good / TRIAL / "result.json"
    doc = json.loads(path.read_text())
    del doc["agent_info"]
    path.write_text(json.dumps(doc))
    (reason,) = reasons(ingest_and_check_good_kept(store, good, 1))
    assert reason == f"{path}: record fix-csv-parser__Hk3mQ2p: field agent_info: Field required. Add the field"


def test_bad_jsonl_lines_are_quarantined_one_by_one(store, good):
    path = good / "jsonl" / "rollouts.jsonl"
    lines = path.read_text().splitlines()
    lines.insert(1, '{"trajectory_id": "no-run", "task_id": "k"}')
    lines.insert(2, '{"trajectory_id": "bad-outcome", "run_id": "r", "task_id": "k", "outcome": "won"}')
    lines.insert(3, '{"trajectory_id": "cut", "run_id": ')
    path.write_text("\n".join(lines) + "\n")
    report = ingest_and_check_good_kept(store, good, 3)
    assert reasons(report) == [
        f"{path}: record line 2: field run_id: Field required. Add the field",
        f"{path}: record line 3: field outcome: Input should be 'passed', 'failed' or 'error' (got 'won'). "
        "Fix the value to match the format's schema",
        f"{path}: record line 4: invalid JSON: EOF while parsing a value at line 1 column 35 (the file looks truncated). "
        "Re-export the file or fix it by hand",
    ]
    assert store.query("select count(*) from trajectories where source_format = 'jsonl'").rows == [(3,)]


def test_duplicate_id_with_different_content_keeps_the_first(store, good):
    original = good / "jsonl" / "rollouts.jsonl"
    first = json.loads(original.read_text().splitlines()[0])
    first["reward"] = 0.5
    clash = good / "jsonl" / "zz-clash.jsonl"
    clash.write_text(json.dumps(first) + "\n")
    (reason,) = reasons(ingest_and_check_good_kept(store, good, 1))
    assert reason == (
        f"{clash}:1: record rl-step120-p17-0: field trajectory_id: trajectory_id 'rl-step120-p17-0' is "
        f"already known with different content: the copy read from {original}:1 earlier in this call is kept. "
        "Give one of the two attempts its own id"
    )
    assert store.query("select reward from trajectories where trajectory_id = 'rl-step120-p17-0'").rows == [(1.0,)]
    # across calls the stored one wins again, and the message says which copy is stored and how to replace it
    report = ingest(store, [clash], workers=1)
    assert [i.reason for i in report.errors] == [
        f"{clash}:1: record rl-step120-p17-0: field trajectory_id: trajectory_id 'rl-step120-p17-0' is already known with "
        f"different content: the stored copy came from {original}:1. If this copy is the one to keep, ingest it again with "
        "--replace (the stored trajectory, its steps, tests and codes are replaced); otherwise give this attempt its own id"
    ]
    replaced = ingest(store, [clash], workers=1, replace=True)
    assert replaced.errors == [] and replaced.replaced == 1
    assert store.query(
        "select reward, source_path from trajectories where trajectory_id = 'rl-step120-p17-0'"
    ).rows == [(0.5, f"{clash}:1")]


def test_reformatting_a_file_is_not_a_change_of_content(store, good):
    ingest(store, [good], workers=1)
    for path in [p for p in good.rglob("*") if p.suffix in (".json", ".jsonl", ".txt") and p.is_file()]:
        text = path.read_bytes()
        if path.suffix == ".json" and text.strip().startswith(b"{"):
            text = json.dumps(json.loads(text), indent=7).encode()  # re-indented
        path.write_bytes(text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))  # and CRLF
    again = ingest(store, [good], workers=1)
    assert again.errors == [] and again.inserted == 0 and again.unchanged > 0


def test_a_store_from_before_canonical_hashes_reads_unchanged_files_as_unchanged(store, good):
    from curriculab.analysis.ingest.hashes import HASH_PREFIX
    from curriculab.analysis.ingest.pipeline import discover, read_unit

    first = ingest(store, [good], workers=1)
    units, _ = discover([good])
    legacy = {k: v for unit in units for k, v in read_unit(unit).batch.legacy_hashes.items()}
    # what an older curriculab stored: hashes of the raw bytes, and no manifest
    store.run_statements(
        [("update trajectories set content_hash = ? where trajectory_id = ?", [h, t]) for t, h in legacy.items()]
        + [("delete from ingest_manifest", [])]
    )
    assert len(legacy) == first.inserted
    again = ingest(store, [good], workers=1)
    assert again.errors == [] and again.inserted == 0 and again.unchanged == first.inserted
    hashes = [h for (h,) in store.query("select content_hash from trajectories").rows]
    assert all(h.startswith(HASH_PREFIX) for h in hashes)  # upgraded as they were seen again


@pytest.mark.parametrize("workers", [1, 2])
def test_readers_hash_raw_bytes_only_for_a_store_that_holds_such_hashes(store, good, monkeypatch, workers):
    from curriculab.analysis.ingest import pipeline

    monkeypatch.setattr(pipeline, "_PARALLEL_MIN_UNITS", 2)  # with 2 workers, reader processes read
    legacy = []
    real_add = pipeline._Writer.add

    def add(self, result):
        legacy.extend(result.batch.legacy_hashes.values())
        real_add(self, result)

    monkeypatch.setattr(pipeline._Writer, "add", add)
    first = ingest(store, [good], workers=workers)
    assert first.inserted > 0 and first.errors == [] and legacy == []  # a new store: nothing to compare them with
    kept = store.query("select trajectory_id from trajectories order by 1 limit 1").scalar()
    store.run_statements([("update trajectories set content_hash = '0123abcd' where trajectory_id = ?", [kept])])
    again = ingest(store, [good], workers=workers, verify=True)  # a store holding a raw-bytes hash
    assert len(legacy) == first.inserted and all(legacy) and again.inserted == 0


def test_invalid_utf8(store, good):
    path = good / TRIAL / "agent" / "trajectory.json"
    data = path.read_bytes().replace(b"Reading parser.py.", b"Reading \xff\xfe parser.py.")
    path.write_bytes(data)
    warning = _kept_without_steps(store, ingest_and_check_good_kept(store, good, 0), path)
    offset = data.index(b"\xff")
    assert warning == (
        f"{path}: record fix-csv-parser__Hk3mQ2p: not ATIF: not JSON (not valid UTF-8 (byte {offset}: "
        "b'\\xff')); stored the trial's verdict, tokens and tests without steps. Convert the trajectory to "
        "ATIF if its steps matter"
    )
    standalone = good / "atif" / "session-42.json"
    standalone.write_bytes(standalone.read_bytes().replace(b'"session_id"', b'"session_id\xff"', 1))
    (reason,) = reasons(ingest(store, [standalone], workers=1))
    assert reason.startswith(f"{standalone}: not valid UTF-8 (byte ") and reason.endswith("Re-encode the file as UTF-8")


@pytest.mark.slow
def test_a_50_mb_observation_lands_capped_with_a_warning(store, good):
    path = good / TRIAL / "agent" / "trajectory.json"
    doc = json.loads(path.read_text())
    huge = "x" * (50 * 2**20)
    doc["steps"][3]["observation"]["results"][0]["content"] = "HEAD" + huge + "TAIL"
    path.write_text(json.dumps(doc))
    report = ingest_and_check_good_kept(store, good, 0)
    (warning,) = report.warnings
    assert warning.severity == "warning" and warning.field == "output"
    assert "stored its first and last 32,768 (output_truncated = true)" in warning.reason
    length, truncated, head, tail = store.query(
        "select length(output), output_truncated, left(output, 4), right(output, 4) from steps "
        "where trajectory_id = 'fix-csv-parser__Hk3mQ2p' and step_idx = 4"
    ).rows[0]
    assert truncated and head == "HEAD" and tail == "TAIL" and length < MAX_OUTPUT_CHARS + 100


def test_empty_directory_and_missing_path(store, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    report = ingest(store, [empty, tmp_path / "missing"], workers=1)
    assert reasons(report) == [
        f"{empty}: directory holds no input curriculab can read as auto. Point at a Harbor job, a `tb run` directory, "
        "task directories, or .json/.traj/.eval/.jsonl files",
        f"{tmp_path / 'missing'}: no such file or directory. Check the path",
    ]
    assert len(stored_errors(store)) == 2


def test_unknown_formats(store, good):
    stray = good / "atif" / "package-lock-like.json"
    stray.write_text('{"name": "app", "lockfileVersion": 3}')
    csv_file = good / "notes.csv"
    csv_file.write_text("a,b\n1,2\n")
    report = ingest(store, [good, csv_file], workers=1)
    assert reasons(report) == [  # problems found while walking come first, then those found while reading
        f"{csv_file}: unknown file type '.csv' for format auto. Pass --format with one of atif, swe-agent, "
        "mini-swe-agent, claude-code, codex-cli, openhands, inspect, jsonl, or give a Harbor job / tb run directory",
        f"{stray}: not a recognised trajectory format (looked for ATIF `schema_version` and `steps`, an Inspect log's "
        "`eval` and `samples`, a Terminal-Bench `results` list of trials, a mini-swe-agent `trajectory_format`, or an "
        "OpenHands event list). "
        "Pass --format to force a reader, or convert the file to curriculab JSONL (docs/jsonl.md)",
    ]
    assert row_count(store, "trajectories") == 21


def test_one_bad_trial_in_a_tb_run_does_not_cost_the_others(store, good):
    path = good / "tb" / "2025-08-20__12-00-00" / "results.json"
    doc = json.loads(path.read_text())
    doc["results"][1]["is_resolved"] = "maybe"
    path.write_text(json.dumps(doc))
    report = ingest_and_check_good_kept(store, good, 1)
    assert reasons(report) == [
        f"{path}: record hello-world.2-of-2.2025-08-20__12-00-00: field results[1].is_resolved: Input should be a valid "
        "boolean (got 'maybe'). Fix the value to match the format's schema"
    ]
    assert store.query("select count(*) from trajectories where source_format = 'tb'").rows == [(9,)]


def test_cli_prints_a_summary_and_exits_1_when_anything_was_quarantined(cli_run, good):
    (good / "atif" / "broken.json").write_text("{")
    result = cli_run("ingest", str(good))
    assert result.exit_code == 1
    assert result.stdout.startswith("Ingested 21 trajectories (")
    assert "1 quarantined; 0 warnings." in result.stdout
    assert f"quarantined: {good / 'atif' / 'broken.json'}: invalid JSON" in result.stderr
    again = cli_run("ingest", str(good / "jsonl"))
    assert again.exit_code == 0 and "0 quarantined" in again.stdout and "3 unchanged" in again.stdout


def test_links_fifos_and_devices_never_hang_or_abort_an_ingest(store, good):
    import os

    (good / "jsonl" / "loop").symlink_to(good)  # a loop back to the top
    os.mkfifo(good / "atif" / "pipe.json")  # opening it would block forever
    (good / "atif" / "zeros.json").symlink_to("/dev/zero")  # reading it would never end
    report = ingest(store, [good], workers=1)
    assert report.errors == [] and row_count(store, "trajectories") == 21  # everything real landed, once
    (loop,) = [w.reason for w in report.warnings if "symlink" in w.reason]
    assert loop == (
        f"{good / 'jsonl' / 'loop'}: a symlink back to {good}, which is already being walked; skipped. "
        "Nothing to do, or remove the link"
    )
    pipe = ingest(store, [good / "atif" / "pipe.json"], workers=1)
    assert [e.reason for e in pipe.errors] == [
        f"{good / 'atif' / 'pipe.json'}: not a regular file (a FIFO, a device or a socket). Point at the file itself"
    ]


def test_a_harbor_task_path_outside_the_input_is_never_read(store, good, tmp_path):
    outside = tmp_path / "elsewhere" / "secret-task"
    outside.mkdir(parents=True)
    (outside / "task.toml").write_text('[metadata]\ndifficulty = "hard"\ncategory = "stolen"\n')
    (outside / "instruction.md").write_text("SECRET INSTRUCTION")
    path = good / TRIAL / "result.json"
    for task_path in (str(outside), "../../../../elsewhere/secret-task"):
        doc = json.loads(path.read_text())
        doc["config"]["task"]["path"] = task_path
        doc["task_id"] = {"path": task_path}
        path.write_text(json.dumps(doc))
        ingest(store, [good / TRIAL], workers=1)
        assert store.query(
            "select count(*) from tasks where instruction = 'SECRET INSTRUCTION' or task_type = 'stolen'"
        ).rows == [(0,)]


def test_jsonl_outputs_are_capped_like_every_other_format(store, tmp_path):
    record = {
        "trajectory_id": "big",
        "run_id": "r",
        "task_id": "k",
        "outcome": "failed",
        "steps": [{"step_idx": 0, "source": "env", "action": "run", "command": "make", "output": "x" * 200_000}],
    }
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = ingest(store, [path], workers=1)
    assert report.errors == [] and len(report.warnings) == 1
    assert store.query(
        "select length(output) < 70000, output_truncated from steps where trajectory_id = 'big'"
    ).rows == [(True, True)]


def test_bad_mini_swe_agent_and_claude_code_inputs_are_named_and_the_rest_lands(store, tmp_path, fixtures):
    root = tmp_path / "input"
    mini = root / "mini"
    shutil.copytree(fixtures / "mini-swe-agent", mini)
    # a report.json beside a trajectory that is not SWE-bench's: a warning, the trajectory lands without a verdict
    report_file = mini / "claude-sonnet-4-5__swebench-lite" / "astropy__astropy-14365" / "report.json"
    report_file.write_text('{"astropy__astropy-14365": {"resolved": "yes"}}')
    # a trajectory of another format's version: refused by name and field
    other = mini / "run" / "x" / "x.traj.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"info": {}, "messages": [], "trajectory_format": "mini-swe-agent-9"}))
    # a Claude Code transcript with one line cut short: that line is skipped with a warning, the rest read
    session = root / "claude" / "-Users-dev-src-csvtool"
    shutil.copytree(fixtures / "claude-code" / "-Users-dev-src-csvtool", session)
    transcript = next(session.glob("*.jsonl"))
    lines = transcript.read_text().splitlines()
    lines.insert(3, lines[3][:40])
    transcript.write_text("\n".join(lines) + "\n")
    report = ingest(store, [root], workers=1)
    assert reasons(report) == [
        f"{other}: record x: field trajectory_format: trajectory_format 'mini-swe-agent-9' is not mini-swe-agent-1 "
        "or -1.1. Check the file's source, or pass another --format"
    ]
    warned = [w.reason for w in report.warnings]
    assert any(
        w.startswith(f"{report_file}: record astropy__astropy-14365: field report.json: not a SWE-bench report")
        for w in warned
    )
    assert any(
        w.startswith(f"{transcript}: record {transcript.stem}: field line 4: line 4 is not JSON") for w in warned
    )
    outcomes = dict(store.query("select task_id, outcome from trajectories").rows)
    assert outcomes["astropy__astropy-14365"] is None and outcomes["sympy__sympy-20590"] == "failed"
    assert len(outcomes) == 3  # both mini-swe-agent trajectories and the session
