"""The episode environment: a shell that keeps its state like a terminal, bounded commands, the
task's files where its Dockerfile puts them, nothing else of the host, and a verifier that judges
from its own sandbox."""

from __future__ import annotations

import shutil

import pytest

from curriculab.training.terminal import Episode, EpisodeLimits, NeedsImage, check_task, load_task
from tests.training.terminal_tasks import ONE_MILESTONE, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)")


@pytest.fixture(params=["bwrap", "docker"])
def backend(request, require_docker):
    """Each episode test on bubblewrap, and on Docker (a daemon is required there; conftest marks it)."""
    if request.param == "docker":
        from curriculab.training.terminal.docker import client

        require_docker(client() is not None)
    return request.param


def test_the_shell_keeps_its_state_between_commands(tmp_path, backend):
    with Episode(load_task(write_task(tmp_path)), backend=backend) as episode:
        assert episode.run("pwd").output == "/app\n"
        assert episode.run("cd out && export GREETING=hi && counter=41").exit_code == 0
        assert episode.run("counter=$((counter + 1)); echo $PWD $GREETING $counter").output == "/app/out hi 42\n"
        assert episode.run("sleep 30 & echo started").output == "started\n"
        assert "sleep 30" in episode.run("jobs").output
        failing = episode.run("ls /app/missing")
        assert failing.exit_code == 2 and "No such file" in failing.output
        assert episode.run("false || exit 7").exit_code == 7  # the shell itself exited
        restarted = episode.run("pwd; echo ${counter:-unset}")
        assert restarted.output == "/app\nunset\n" and not restarted.shell_exited


def test_a_command_is_bounded_in_time_and_output_and_the_shell_survives_it(tmp_path, backend):
    limits = EpisodeLimits(command_timeout_s=1.0, output_bytes=1000)
    with Episode(load_task(write_task(tmp_path)), limits, backend=backend) as episode:
        episode.run("cd out; marker=kept")
        slow = episode.run("sleep 20; echo never")
        assert slow.timed_out and slow.exit_code == 124 and "never" not in slow.output
        assert slow.seconds < 5 and "[timed out after 1 s" in slow.output
        assert episode.run("echo $marker; pwd").output == "kept\n/app/out\n"  # state survived the kill
        loud = episode.run("yes 0123456789 | head -c 100000")
        assert loud.dropped_bytes == 100000 - 1000 and "bytes of output dropped" in loud.output
        assert loud.output.startswith("0123456789") and len(loud.output) < 1200
        assert episode.run("cat").output == ""  # stdin is /dev/null: nothing waits on the harness's pipe


def test_a_step_gets_its_agent_timeout_and_nothing_runs_after_it(tmp_path, backend):
    toml = 'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n\n[agent]\ntimeout_sec = 1.5\n'
    with Episode(load_task(write_task(tmp_path, toml=toml)), backend=backend) as episode:
        assert episode.run("echo in time").output == "in time\n"
        slow = episode.run("sleep 10; echo never")
        assert slow.timed_out and slow.seconds < 3  # the command's own timeout, cut to the time left
        late = episode.run("echo hello > greeting.txt")
        assert late.exit_code == 124 and "is over: nothing ran" in late.output
        assert episode.finish().milestones == {"greeting": 0.0, "count": 0.0}


def test_the_task_files_are_laid_out_and_nothing_else_of_the_host_is_visible(tmp_path, backend):
    task = write_task(
        tmp_path,
        files={"src/app.py": "print('hi')\n"},
        dockerfile=(
            "FROM python:3.12-slim\nENV MODE=test\nWORKDIR /srv2\nCOPY src/ /srv2/src/\nCOPY data.txt ./input/\n"
            "RUN mkdir -p /srv2/build && touch /srv2/build/.keep\n"
        ),
    )
    with Episode(load_task(task), backend=backend) as episode:
        listing = episode.run("find /srv2 -type f | sort; echo $MODE").output.split()
        assert listing == ["/srv2/build/.keep", "/srv2/input/data.txt", "/srv2/src/app.py", "test"]
        assert episode.run("python3 src/app.py").output == "hi\n"
        for hidden in ("/work", "/opt", "/home", "/tests", "/solution", str(tmp_path)):
            assert episode.run(f"ls {hidden}").exit_code != 0, hidden
        assert episode.run("ls -A /tmp /root").output == "/root:\n\n/tmp:\n"
        assert episode.run("touch /usr/planted").exit_code != 0  # the host's folders are read-only
        network = episode.run("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\"")
        assert network.exit_code != 0 and "unreachable" in network.output.lower()


def test_the_verifier_reads_milestones_and_says_why_when_there_is_no_reward(tmp_path, backend):
    task = load_task(write_task(tmp_path))
    with Episode(task, backend=backend) as episode:
        episode.run("echo hello > greeting.txt")
        result = episode.finish()
    assert result.milestones == {"greeting": 1.0, "count": 0.0} and result.reward == 0.5 and result.error is None
    silent = load_task(write_task(tmp_path, "silent", test_sh="#!/bin/bash\necho checked\n"))
    with Episode(silent, backend=backend) as episode:
        result = episode.finish()
    assert result.reward == 0 and "wrote no /logs/verifier/reward.txt" in result.error
    assert "checked" in result.steps[0].output
    bare = "#!/bin/bash\necho 0.25 > /logs/verifier/reward.txt\n"
    text = load_task(write_task(tmp_path, "text", test_sh=bare, toml=ONE_MILESTONE))
    with Episode(text, backend=backend) as episode:
        assert episode.finish().milestones == {"reward": 0.25}
    # a bare reward cannot stand for the two milestones a task declares
    two = load_task(write_task(tmp_path, "two", test_sh=bare))
    with Episode(two, backend=backend) as episode:
        refused = episode.finish()
    assert refused.reward == 0 and refused.error == (
        "main: the verifier wrote 0 named milestones (a bare reward), but the task declares 2"
    )


MULTI_STEP = """schema_version = "1.4"
multi_step_reward_strategy = "{strategy}"

[task]
name = "curriculab/two-steps"
description = "Write a file, then extend it."

[metadata]
difficulty = "medium"
category = "file-operations"

[agent]
timeout_sec = 120.0

[[steps]]
name = "write"

[[steps]]
name = "extend"
[steps.verifier]
timeout_sec = 30.0
"""


def _two_steps(tmp_path, strategy):
    task = write_task(tmp_path, f"two-{strategy}", toml=MULTI_STEP.format(strategy=strategy), solve_sh=None)
    (task / "instruction.md").unlink()
    shutil.rmtree(task / "tests")
    for name, check, solve in (
        ("write", "grep -qx one /app/notes.txt", "echo one > /app/notes.txt"),
        ("extend", "grep -qx two /app/notes.txt && grep -qx one /app/notes.txt", "echo two >> /app/notes.txt"),
    ):
        step = task / "steps" / name
        (step / "tests").mkdir(parents=True)
        (step / "solution").mkdir()
        (step / "instruction.md").write_text(f"Step {name}.\n")
        (step / "tests" / "test.sh").write_text(
            f"#!/bin/bash\nif {check}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
        )
        (step / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{solve}\n")
    return load_task(task)


def test_a_multi_step_task_is_judged_step_by_step_and_combined_as_its_strategy_says(tmp_path, backend):
    task = _two_steps(tmp_path, "mean")
    assert [s.name for s in task.steps] == ["write", "extend"] and task.steps[1].verifier_timeout_s == 30.0
    with Episode(task, backend=backend) as episode:
        assert episode.instruction == "Step write.\n"
        episode.run("echo one > notes.txt")
        assert episode.end_step().reward == 1.0
        assert episode.instruction == "Step extend.\n"
        episode.run("echo three >> notes.txt")
        result = episode.finish()
    assert result.milestones == {"write": 1.0, "extend": 0.0} and result.reward == 0.5
    final = _two_steps(tmp_path, "final")
    with Episode(final, backend=backend) as episode:
        episode.run("echo one > notes.txt")
        result = episode.finish()  # the last step is judged as the agent left it
    assert result.milestones == {"write": 1.0, "extend": 0.0} and result.reward == 0.0
    assert check_task(final.path, backend=backend).ok  # each step's oracle runs before that step's verifier


def test_check_runs_the_oracle_and_the_do_nothing_agent_and_flags_a_verifier_it_cannot_trust(tmp_path):
    # on bubblewrap: the Docker backend's check runs in tests/training/test_terminal_docker.py
    good = check_task(write_task(tmp_path, "good"))
    assert good.ok and good.backend == "bwrap"
    assert good.oracle.milestones == {"greeting": 1.0, "count": 1.0} and good.nop.reward == 0.0
    always = """#!/bin/bash\necho '{"greeting": 1, "count": 1}' > /logs/verifier/reward.json\n"""
    lenient = check_task(write_task(tmp_path, "lenient", test_sh=always))
    assert not lenient.ok and any("do-nothing run scores 1" in flag for flag in lenient.flags)
    wrong = check_task(write_task(tmp_path, "wrong", solve_sh="#!/bin/bash\necho hello > /app/greeting.txt\n"))
    assert any("oracle scores 0.5 (count=0)" in flag for flag in wrong.flags)
    unsolved = check_task(write_task(tmp_path, "unsolved", solve_sh=None))
    assert unsolved.ok and unsolved.oracle is None and unsolved.nop is not None


def test_a_task_that_cannot_run_here_says_what_it_needs(tmp_path):
    heavy = write_task(
        tmp_path,
        "heavy",
        dockerfile="FROM ghcr.io/example/base:2025\nRUN apt-get update && apt-get install -y "
        "curriculab-no-such-package && rm -rf /var/lib/apt/lists/*\n"
        "RUN pip3 install --no-cache-dir curriculab-no-such-dist==1.0\nWORKDIR /app\nCOPY data.txt /app/\n",
    )
    report = check_task(heavy)
    assert report.backend is None and report.oracle is None
    assert "needs its image: apt packages missing here: curriculab-no-such-package" in report.reasons
    assert "needs its image: python3 packages missing here: curriculab-no-such-dist==1.0" in report.reasons
    fetching = write_task(
        tmp_path, "fetching", test_sh="#!/bin/bash\ncurl -LsSf https://astral.sh/uv/install.sh | sh\n"
    )
    assert any(r.startswith("verifier needs the network: test.sh:2") for r in check_task(fetching).reasons)
    etc = write_task(tmp_path, "etc", dockerfile="FROM ubuntu\nWORKDIR /app\nCOPY data.txt /etc/app/data.txt\n")
    with pytest.raises(NeedsImage, match="places files in /etc"):
        Episode(load_task(etc))
    failing_run = write_task(tmp_path, "failing-run", dockerfile="FROM ubuntu\nWORKDIR /app\nRUN useradd -m agent\n")
    assert "needs its image: its Dockerfile's `RUN useradd -m agent` fails here" in check_task(failing_run).reasons[0]
