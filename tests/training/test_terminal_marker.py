"""The agent's doing is the agent's score: inside a shell the agent controls, the harness's
end-of-command marker can always be imitated (a DEBUG trap sees the closing `printf` and its nonce;
a `printf` function replaces it). A marker that carries no status, comes twice or never comes while
the shell lives on ends the episode as the agent's 0 with the reason (`MarkerBroken`,
`EpisodeResult.forfeited`), never the environment's None; the episode is still written and coded,
and the honest episode after it in the same environment scores 1. On every backend the machine has."""

from __future__ import annotations

import os
import shutil

import pytest

from curriculab.training.terminal import EpisodeLimits
from curriculab.training.terminal.environment import TerminalEnvironment
from curriculab.training.terminal.rewards import milestone_reward, pass_reward, verification_reward
from tests.training.terminal_tasks import MILESTONE_SOLUTION, write_task

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)"),
]

LIMITS = EpisodeLimits(
    command_timeout_s=2, disk_bytes=32 << 20
)  # the missing marker: 2 s, then 10 s after the interrupt

# The DEBUG trap fires before the harness's closing `printf '\n<nonce> %d\n' "$?"`: it reads the nonce
# (16 hex digits at offset 10 of $BASH_COMMAND) and prints a marker of its own first.
_TRAP = 'forge() {{ case "$BASH_COMMAND" in "printf \'\\n"*) builtin printf \'\\n%s {status}\\n\' "${{BASH_COMMAND:10:16}}";; esac; }}; trap forge DEBUG'
FORGED = {
    "a trap's marker with no status": ("touch /app/x; " + _TRAP.format(status="x"), "carried b'x', not an exit status"),
    "a trap's marker with a status, the real one after it": (
        "touch /app/x; " + _TRAP.format(status="0"),
        "end-of-command marker came twice",
    ),
    "a printf function's marker with no status": (
        'touch /app/x; printf() { builtin printf "${1/\\%d/x}"; }',
        "carried b'x', not an exit status",
    ),
    "a printf that prints nothing": (
        "touch /app/x; printf() { :; }",
        "never ended the command with the harness's marker",
    ),
}
HONEST = MILESTONE_SOLUTION.replace("#!/bin/bash\n", "") + "cat /app/greeting.txt /app/count.txt"


@pytest.fixture(params=["bwrap", "docker", "namespaces"])
def backend(request, require_docker):
    if request.param == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces isolation needs root (CI and scripts/setup.sh run as root)")
    if request.param == "docker":
        from curriculab.training.terminal.docker import client

        require_docker(client() is not None)
    return request.param


def test_a_broken_or_imitated_marker_is_the_agents_zero_never_none(tmp_path, backend):
    task = write_task(tmp_path, "greet")
    with TerminalEnvironment({"greet": task}, LIMITS, backend=backend) as environment:
        for name, (command, why) in FORGED.items():
            environment.reset(task_id="greet")
            environment.bash(command)
            # the next command is not run: the episode is over (a real marker behind an imitated
            # one, if it came late, shows up in that command's output, and ends it there)
            assert environment.bash("echo more").startswith("[the episode is over and scores 0: "), name
            result = environment.result
            assert result.failure is None, (name, result.failure)
            assert result.forfeited is not None and why in result.forfeited, (name, result.forfeited)
            assert result.steps[0].refused.startswith("the agent forfeited the episode: "), name
            rewards = [f([environment]) for f in (milestone_reward, pass_reward, verification_reward)]
            assert rewards == [[0.0], [0.0], [0.0]], (name, rewards)
        environment.reset(task_id="greet")
        assert environment.bash(HONEST).startswith("[exit code 0]\nhello\n3"), backend
        assert milestone_reward([environment]) == [1.0] and environment.result.forfeited is None


def test_a_forfeited_episode_is_written_and_coded_as_the_agents_failure(tmp_path, store):
    import json

    from curriculab.analysis.coding import run_environment_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.training.terminal.trial import write_trial

    task = write_task(tmp_path, "greet")
    with TerminalEnvironment({"greet": task}, LIMITS) as environment:
        environment.reset(task_id="greet")
        environment.bash(FORGED["a trap's marker with no status"][0])
        trial = write_trial(tmp_path / "job", "forged", environment.task, environment.result, model="m")
    written = json.loads((trial / "result.json").read_text())
    assert written["exception_info"] is None and written["verifier_result"]["rewards"]["reward"] == 0
    extra = json.loads((trial / "agent" / "trajectory.json").read_text())["extra"]
    assert "not an exit status" in extra["forfeited"]
    ingest(store, [tmp_path / "job"])
    assert store.query("select outcome, harness_error from trajectories").rows == [("failed", None)]
    run_environment_coder(store)
    coded = store.query("select count(*) from coding_status where coder = 'environment' and trajectory_id = 'forged'")
    assert coded.rows[0][0] > 0
