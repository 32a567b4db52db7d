"""ATIF v1.7 and v1.8 land with their steps: a per-document `trajectory_id` (with `session_id`
optional), embedded subagents read where they were delegated to, steps copied from an earlier
trajectory left to it, v1.8 audio parts. The fixtures follow the shapes public writers produce
(`tests/fixtures/atif-v1.7/README.md`)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from curriculab.analysis.ingest import ingest

V17 = Path(__file__).resolve().parents[1] / "fixtures" / "atif-v1.7"


def rows(store, sql):
    return store.query(sql).rows


def _ingest(store, *paths: Path):
    report = ingest(store, list(paths), workers=1)
    return report, [i.reason for i in report.warnings]


def test_v17_and_v18_documents_and_v17_harbor_trials_land_with_their_steps(store):
    report, warnings = _ingest(store, V17)
    assert (report.inserted, report.errors, warnings) == (4, [], [])
    assert dict(report.by_format) == {"atif": 2, "harbor": 2}
    assert rows(
        store,
        "select trajectory_id, task_id, outcome, input_tokens, output_tokens, n_steps from trajectories order by 1",
    ) == [
        ("fix-parser__Kc3Wd8s", "fix-parser", "passed", 5900, 420, 9),
        ("fix-parser__Vq7Lm2d", "fix-parser", "failed", 6800, 290, 6),
        ("terminus-2-fix-parser-cont-1", "fix-parser", "failed", 3100, 100, 5),
        ("traj-root-7f3c", "fix-date-parsing", "passed", 9700, 290, 10),
    ]
    again = ingest(store, [V17], workers=1, verify=True)  # read again: the same content
    assert (again.inserted, again.unchanged, again.errors) == (0, 4, [])
    # the v1.7 Harbor trial's failing test run is seen, as in any older trial
    assert rows(
        store,
        "select command, call_error from steps where trajectory_id = 'fix-parser__Vq7Lm2d' "
        "and action = 'run' order by step_idx",
    ) == [("cd /app", True), ("python -m pytest -q", True)]  # the line failed: the status is the call's


def test_an_embedded_subagent_is_read_where_it_was_delegated_to(store):
    _ingest(store, V17 / "claude-code-subagent.json")
    assert rows(
        store,
        "select source, tool_name, action, command, call_exit_code, call_error, call_id from steps "
        "where trajectory_id = 'traj-root-7f3c' order by step_idx",
    ) == [
        ("user", None, None, None, None, None, None),
        ("agent", "Task", "other", "Task Run the tests", None, None, "2/toolu_01"),
        # the subagent's own steps: the task it was given, its failing test run, its report
        ("user", None, None, None, None, None, None),
        ("agent", "Bash", "run", "cd /repo", 1, True, "traj-task-toolu_01:2/toolu_s1"),
        ("agent", "Bash", "run", "python -m pytest -q", 1, True, "traj-task-toolu_01:2/toolu_s1"),
        ("agent", None, "message", None, None, None, None),
        ("agent", "Edit", "edit", "Edit /repo/dates.py", None, None, "3/toolu_02"),
        ("agent", "Bash", "run", "cd /repo", 0, False, "4/toolu_03"),
        ("agent", "Bash", "run", "python -m pytest -q", 0, False, "4/toolu_03"),
        ("agent", None, "message", None, None, None, None),
    ]
    assert rows(store, "select message from steps where trajectory_id = 'traj-root-7f3c' and step_idx = 2") == [
        ("Run the test suite in /repo and report which tests fail.",)
    ]


def _variant(tmp_path: Path, name: str, change) -> Path:
    doc = json.loads((V17 / name).read_text())
    change(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_without_final_metrics_the_subagents_tokens_count_with_the_parents(store, tmp_path):
    _ingest(store, _variant(tmp_path, "claude-code-subagent.json", lambda d: d.pop("final_metrics")))
    # 8600 + 220 in the parent's steps, 1100 + 70 in the subagent's
    assert rows(store, "select input_tokens, output_tokens from trajectories") == [(9700, 290)]


def test_a_subagent_no_step_names_follows_the_parents_steps(store, tmp_path):
    def unnamed(doc):
        doc["steps"][1]["observation"]["results"][0].pop("subagent_trajectory_ref")

    _ingest(store, _variant(tmp_path, "claude-code-subagent.json", unnamed))
    assert rows(
        store, "select step_idx, command, call_id from steps where call_id like 'traj-task%' order by step_idx"
    ) == [(7, "cd /repo", "traj-task-toolu_01:2/toolu_s1"), (8, "python -m pytest -q", "traj-task-toolu_01:2/toolu_s1")]
    assert rows(store, "select count(*) from steps") == [(10,)]


def test_copied_context_is_left_to_its_own_trajectory_and_audio_parts_add_no_text(store):
    _ingest(store, V17 / "terminus-continuation.json")
    steps = rows(store, "select source, message, command from steps order by step_idx")
    assert steps[0] == ("user", "Summary so far: parse.py's first() indexes an empty list. Continue from here.", None)
    assert "cat /app/src/parse.py" not in [command for _, _, command in steps]
    assert len(steps) == 5
    # it started when its own first step did, not when the copied ones had
    assert rows(store, "select started_at::VARCHAR, ended_at::VARCHAR from trajectories") == [
        ("2026-11-03 14:05:00+00", "2026-11-03 14:05:15+00")
    ]


def test_a_document_that_names_itself_neither_way_is_kept_under_its_place(store, tmp_path):
    path = _variant(tmp_path, "terminus-continuation.json", lambda d: d.pop("trajectory_id"))
    report, warnings = _ingest(store, path)
    record = f"atif:{tmp_path.name}/terminus-continuation"
    assert report.inserted == 1 and rows(store, "select trajectory_id from trajectories") == [(record,)]
    assert warnings == [
        f"{path}: record {record}: field trajectory_id: no trajectory_id or session_id; stored the "
        f"trajectory as {record!r}. Add trajectory_id (ATIF v1.7) so the trajectory keeps its id "
        "wherever the file lies"
    ]


def test_a_newer_version_is_still_refused_by_name(store, tmp_path):
    path = _variant(tmp_path, "claude-code-subagent.json", lambda d: d.update(schema_version="ATIF-v1.9"))
    report, _ = _ingest(store, path)
    assert report.inserted == 0
    assert [e.reason for e in report.errors] == [
        f"{path}: field schema_version: schema_version 'ATIF-v1.9' is not an ATIF version "
        "curriculab reads (ATIF-v1.0 to ATIF-v1.8). Convert the file to a supported ATIF version, or to curriculab "
        "JSONL (docs/jsonl.md)"
    ]


def test_a_v17_document_is_found_without_a_session_id_and_with_its_version_far_in(store, tmp_path):
    doc = json.loads((V17 / "terminus-continuation.json").read_text())
    late = {"agent": doc["agent"], "notes": "n" * 5000, **doc}  # schema_version past the first 4 KiB
    path = tmp_path / "late.json"
    path.write_text(json.dumps(late))
    report, warnings = _ingest(store, path)
    assert (dict(report.by_format), report.inserted, warnings) == ({"atif": 1}, 1, [])


SPLIT = "atif-v1.7/jobs/terminus-2-haiku45-v17/fix-parser__Kc3Wd8s"


def _commands(store, trajectory_id: str = "fix-parser__Kc3Wd8s") -> list:
    return rows(
        store,
        f"select command, call_error from steps where trajectory_id = '{trajectory_id}' "
        "and action is not null order by step_idx",
    )


def test_a_split_trial_is_read_through_its_continuation(store):
    """Terminus-2 compacts its context into `trajectory.cont-1.json`, which starts with copies of
    the steps before: the attempt is the first file's steps, then the continuation's own."""
    _ingest(store, V17 / "jobs")
    assert _commands(store) == [
        ("cat /app/src/parse.py", None),
        ("cd /app", True),  # one screen for `cd /app && python -m pytest -q`: the call's
        ("python -m pytest -q", True),
        (r"sed -i 's/return x\[0\]/return x[0] if x else []/' /app/src/parse.py", None),
        ("cd /app", False),
        ("python -m pytest -q", False),
        ("mark_task_complete", None),
    ]


def test_without_harbors_totals_the_last_segments_count_the_whole_run(store, copy_fixture):
    trial = copy_fixture(SPLIT)
    result = json.loads((trial / "result.json").read_text())
    (trial / "result.json").write_text(json.dumps({**result, "agent_result": None}))
    _ingest(store, trial.parent)
    # 5,900: the continuation's final_metrics, which already count the first file's 3,600
    assert rows(store, "select input_tokens, output_tokens, cost_usd from trajectories") == [(5900, 420, 0.0049)]
    cont = trial / "agent" / "trajectory.cont-1.json"
    cont.write_text(json.dumps({k: v for k, v in json.loads(cont.read_text()).items() if k != "final_metrics"}))
    again = ingest(store, [trial.parent], workers=1, replace=True)
    assert again.replaced == 1  # without them, the first file's totals and the continuation's steps
    assert rows(store, "select input_tokens, output_tokens, cost_usd from trajectories") == [(5900, 420, 0.0049)]


def _split_variant(store, copy_fixture, change) -> tuple[list, list, Path]:
    trial = copy_fixture(SPLIT)
    change(trial / "agent")
    report, warnings = _ingest(store, trial.parent)
    assert report.inserted == 1 and report.errors == []
    return _commands(store), warnings, trial


FIRST_FILE = [("cat /app/src/parse.py", None), ("cd /app", True), ("python -m pytest -q", True)]


def test_a_missing_continuation_keeps_the_steps_before_it(store, copy_fixture):
    commands, warnings, trial = _split_variant(
        store, copy_fixture, lambda agent: (agent / "trajectory.cont-1.json").unlink()
    )
    assert commands == FIRST_FILE
    assert warnings == [
        f"{trial}/agent/trajectory.cont-1.json: record fix-parser__Kc3Wd8s: field continued_trajectory_ref: "
        "continued_trajectory_ref names this file, which is not there; stored the steps before it. "
        "Copy the trial's whole agent/ folder"
    ]


def test_a_continuation_refused_part_way_adds_none_of_its_steps(store, copy_fixture):
    def repeat_a_step_id(agent):
        cont = agent / "trajectory.cont-1.json"
        doc = json.loads(cont.read_text())
        doc["steps"][-1]["step_id"] = 5  # the walk has added step 5's calls when it meets this
        cont.write_text(json.dumps(doc))

    commands, warnings, _ = _split_variant(store, copy_fixture, repeat_a_step_id)
    assert commands == FIRST_FILE
    assert len(warnings) == 1 and warnings[0].endswith(
        "a continuation not read (field steps[5].step_id: step_id 5 appears twice); stored the steps before it. "
        "Fix or remove the file"
    )


def test_a_continuation_that_leads_back_ends_there(store, copy_fixture):
    def loop(agent):
        cont = agent / "trajectory.cont-1.json"
        cont.write_text(
            json.dumps({**json.loads(cont.read_text()), "continued_trajectory_ref": "/elsewhere/trajectory.json"})
        )

    commands, warnings, _ = _split_variant(store, copy_fixture, loop)
    assert len(commands) == 7
    assert len(warnings) == 1 and "continued_trajectory_ref leads back to trajectory.json" in warnings[0]


def test_a_split_trials_signature_covers_its_continuation(store, copy_fixture):
    """A no-op re-ingest skips a trial after a look at its files: the continuation it was read
    through among them, so that a changed continuation is read again."""
    import curriculab.analysis.ingest.pipeline as pipeline

    trial = copy_fixture(SPLIT)
    unit = pipeline.Unit("harbor", trial)
    signed, _ = pipeline.read_signed(unit, None)
    assert "|trajectory.cont-1.json=" in signed and pipeline.unit_signature(unit, signed) == signed
    assert ingest(store, [trial.parent], workers=1).inserted == 1
    assert ingest(store, [trial.parent], workers=1).skipped == 1
    cont = trial / "agent" / "trajectory.cont-1.json"
    later = time.time() + 5
    os.utime(cont, (later, later))
    assert pipeline.unit_signature(unit, signed) != signed
    again = ingest(store, [trial.parent], workers=1)
    assert (again.skipped, again.unchanged) == (0, 1)  # read again, and found the same
