"""An episode written as a Harbor trial lands in the store as an agent's trajectory: its steps
with their tool calls, actions and exit codes, its milestones as test results."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from curriculab.training.terminal import Episode, load_task
from curriculab.training.terminal.suite import BUILTIN_SUITE
from curriculab.training.terminal.trial import AGENT, Turn, write_trial

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)")

FIX = """cat > stats.py <<'EOF'
def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
EOF"""


def _episode(job, name, commands, turns=None):
    task = load_task(BUILTIN_SUITE / "fix-median")
    started = time.time()
    with Episode(task, observe=True) as episode:
        for command in commands:
            episode.run(command)
        result = episode.finish()
    return write_trial(
        job, name, task, result, model="tiny-llama", turns=turns, started_at=started, finished_at=time.time()
    )


def test_an_episode_lands_in_the_store_as_an_agent_trial_with_its_milestones(tmp_path, cli_run):
    job = tmp_path / "job"
    trial = _episode(
        job,
        "fix-median__passed",
        ["cat stats.py", FIX, "bash run_tests.sh"],
        turns=[Turn("Let me look.", [0], 120, 15), Turn("Fix it and run the tests.", [1, 2], 300, 90)],
    )
    _episode(
        job,
        "fix-median__partial",
        ["sed -i 's/values\\[len(values) \\/\\/ 2\\]/sorted(values)[len(values) \\/\\/ 2]/' stats.py"],
    )
    atif = json.loads((trial / "agent" / "trajectory.json").read_text())
    assert [s["source"] for s in atif["steps"]] == ["user", "agent", "agent"]
    assert atif["steps"][2]["observation"]["results"][1]["content"] == "[exit code 0]\nok\n"
    assert atif["final_metrics"] == {"total_prompt_tokens": 420, "total_completion_tokens": 105, "total_steps": 3}
    done = cli_run("ingest", str(job), "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["inserted"] == 2
    rows = json.loads(
        cli_run(
            "query",
            "SELECT t.trajectory_id, r.agent, t.model, t.outcome, t.reward, t.milestones_passed, t.milestones_total, "
            "t.input_tokens FROM trajectories t JOIN runs r USING (run_id) ORDER BY 1",
            "--json",
        ).stdout
    )
    assert rows == [
        {
            "trajectory_id": "fix-median__partial",
            "agent": AGENT,
            "model": "tiny-llama",
            "outcome": "failed",
            "reward": pytest.approx(1 / 3),
            "milestones_passed": 1,
            "milestones_total": 3,
            "input_tokens": None,
        },
        {
            "trajectory_id": "fix-median__passed",
            "agent": AGENT,
            "model": "tiny-llama",
            "outcome": "passed",
            "reward": 1.0,
            "milestones_passed": 3,
            "milestones_total": 3,
            "input_tokens": 420,
        },
    ]
    steps = json.loads(
        cli_run(
            "query",
            "SELECT action, path, exit_code FROM steps WHERE trajectory_id = 'fix-median__passed' "
            "AND source = 'agent' ORDER BY step_idx",
            "--json",
        ).stdout
    )
    assert steps == [
        {"action": "read", "path": "stats.py", "exit_code": 0},
        {"action": "edit", "path": "stats.py", "exit_code": 0},
        {"action": "run", "path": None, "exit_code": 0},
    ]
