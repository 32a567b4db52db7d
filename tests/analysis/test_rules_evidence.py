"""A rule says *absent* only where it could read what it looks for: trajectories whose steps it
cannot read (a tool this project does not know becomes `other`) get `not_applicable`."""

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.ingest.common import add_trajectory
from curriculab.analysis.store import RowBatch
from curriculab.trajectory.model import Step, Trajectory


def _store_with(store, tid, steps):
    trajectory = Trajectory(trajectory_id=tid, run_id="r", task_id="k", model="m", outcome="failed")
    trajectory.steps = steps
    batch = RowBatch()
    add_trajectory(batch, trajectory, tid, "jsonl", "x")
    store.write_batch(batch)


def _statuses(store, tid):
    return dict(store.query("select code, status from coding_status where trajectory_id = ?", [tid]).rows)


def test_tools_it_cannot_read_leave_command_rules_without_a_verdict(store):
    # a Codex build's single `exec` tool (JavaScript calling exec_command / apply_patch) is not in
    # agents.yaml: every call is `other`, with its output
    opaque = [Step(step_idx=i, source="agent", tool_name="exec", action="other", output="ok") for i in range(4)]
    _store_with(store, "opaque", opaque)
    readable = [
        Step(step_idx=0, source="agent", tool_name="bash", action="run", command="pytest -q", output="1 passed")
    ]
    _store_with(store, "readable", readable)
    run_rule_coders(store)
    assert _statuses(store, "opaque")["tool_misuse"] == "not_applicable"
    assert _statuses(store, "opaque")["reward_hacking"] == "not_applicable"
    assert _statuses(store, "readable")["tool_misuse"] == "absent"
    assert _statuses(store, "readable")["reward_hacking"] == "absent"
