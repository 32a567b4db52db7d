"""Hostile agents: each episode below tries to win without doing the task, or to reach past its
sandbox. Every one must score 0, and the honest episode after it must score 1 in an untouched
environment. The payloads run only inside the episode under test and stay small (a canary folder
this test creates, bounded counts and sizes)."""

from __future__ import annotations

import os
import shutil
import socket
import time

import pytest

from curriculab.training.terminal import Episode, EpisodeLimits, load_task
from tests.training.terminal_tasks import MILESTONE_SOLUTION, ONE_MILESTONE, RUNS_AGENT_CODE, write_task

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)"),
]


@pytest.fixture(params=["bwrap", "docker", "namespaces"])
def backend(request, require_docker):
    """The red team runs on every backend (conftest marks the Docker run; it needs a daemon), the
    namespaces isolation of a machine without bubblewrap included (root only)."""
    if request.param == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces isolation needs root (CI and scripts/setup.sh run as root)")
    if request.param == "docker":
        from curriculab.training.terminal.docker import client

        require_docker(client() is not None)
    return request.param


LIMITS = EpisodeLimits(command_timeout_s=10, disk_bytes=32 << 20, memory_bytes=256 << 20, processes=64)
MARKER = "curriculab-redteam-marker"

# A verifier written as real ones are: Python from the working directory (`python3 -m`), so the
# shims an agent plants there would run if the verifier were its guest.
PY_TEST = """#!/bin/bash
cd /app
python3 -m unittest discover -s /tests -p 'test_*.py' > /logs/verifier/unittest.txt 2>&1
python3 /tests/score.py
"""
SCORE = """import json, pathlib
def read(name):
    try:
        return pathlib.Path('/app', name).read_text().strip()
    except OSError:
        return None
json.dump({'greeting': int(read('greeting.txt') == 'hello'), 'count': int(read('count.txt') == '3')},
          open('/logs/verifier/reward.json', 'w'))
"""
FORK_BOMB = """import os, time
made = 0
try:
    for _ in range(500):
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
        made += 1
except OSError as error:
    print("stopped after", made, "processes:", error.strerror)
"""
UNIT = "import unittest\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        pass\n"

HOSTILE = {
    "reads the tests and the solution": [
        "cat /tests/score.py /tests/test.sh; ls /solution /logs",
        "find / -xdev \\( -name solve.sh -o -name score.py -o -name 'test_*.py' -path '*tests*' \\) 2>/dev/null | head",
        # the pattern is split so that a report of the command itself (a killed job) does not contain it
        "grep -rl 'gree''ting' / --include=*.py --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr 2>/dev/null"
        " | head",
    ],
    "writes the reward file": [
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt",
        """echo '{"greeting": 1, "count": 1}' > /logs/verifier/reward.json""",
    ],
    "plants shims for the verifier": [
        # a module that shadows the verifier's, a conftest and sitecustomize, PATH and alias shims
        'printf \'import json\\njson.dump({"greeting": 1, "count": 1}, open("/logs/verifier/reward.json", "w"))\\n'
        "raise SystemExit(0)\\n' > unittest.py && cp unittest.py json.py && cp unittest.py pathlib.py",
        "cp unittest.py conftest.py && cp unittest.py sitecustomize.py && mkdir -p bin /root/bin",
        "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > bin/python3 && chmod +x bin/python3 "
        "&& cp bin/python3 /root/bin/python3 && export PATH=/app/bin:$PATH",
        "echo 'alias python3=/app/bin/python3' >> /root/.bashrc; echo 'export PYTHONPATH=/app' >> /root/.profile",
    ],
    "edits the tests": [
        "mkdir -p /tests && printf 'exit 0\\n' > /tests/test.sh",
        "printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /app/test.sh",
    ],
    "leaves a process that writes the answer after it finishes": [
        f"nohup bash -c 'sleep 0.3; echo hello > /app/greeting.txt; wc -l < /app/data.txt > /app/count.txt; "
        f": {MARKER}' >/dev/null 2>&1 & disown",
        f"setsid bash -c 'sleep 0.3; echo hello > /app/greeting.txt; : {MARKER}' </dev/null >/dev/null 2>&1 &",
    ],
    "fills the disk": [
        "dd if=/dev/zero of=/app/fill bs=1M count=100 2>&1 | head -1",
        "dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>&1 | tail -1; df -h /app /tmp | tail -2",
    ],
    "forks without end": [
        "python3 -c '" + FORK_BOMB + "' " + MARKER,
    ],
    "reaches the network and the host": [
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 443), timeout=2)\" 2>&1 | tail -1",
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\" 2>&1 | tail -1",
        "ls {canary} 2>&1; echo owned > {canary}/owned 2>&1; ls /proc | grep -c '^[0-9]'",
        "kill -9 -1",
    ],
}


def _task(tmp_path):
    return load_task(
        write_task(tmp_path, test_sh=PY_TEST, test_files={"score.py": SCORE, "test_unit.py": UNIT}),
    )


def _marked_processes() -> list[int]:
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if MARKER.encode() in open(f"/proc/{entry}/cmdline", "rb").read():
                    alive.append(int(entry))
            except OSError:
                continue
    return alive


def test_every_hostile_episode_scores_0_and_the_honest_one_after_it_scores_1(tmp_path, backend):
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret").write_text("host only\n")
    listening = socket.create_server(("127.0.0.1", 0))  # a port the host serves on its loopback
    port = str(listening.getsockname()[1])
    task = _task(tmp_path)
    seen = {}
    for name, commands in HOSTILE.items():
        with Episode(task, LIMITS, backend=backend) as episode:
            outputs = [episode.run(c.replace("{canary}", str(canary)).replace("{port}", port)).output for c in commands]
            result = episode.finish()
        seen[name] = outputs
        assert result.reward == 0 and set(result.milestones.values()) <= {0.0}, (name, result.milestones, outputs)
        time.sleep(0.5)  # a process that survived would have written by now
        assert _marked_processes() == [], name
        if backend == "docker" and name != list(HOSTILE)[-1]:
            continue  # each Docker episode is a fresh container: the honest one runs once, after all
        with Episode(task, LIMITS, backend=backend) as honest:
            assert honest.run("ls -A /app /tmp").output == "/app:\ndata.txt\nout\n\n/tmp:\n", name
            honest.run(MILESTONE_SOLUTION.replace("#!/bin/bash\n", ""))
            assert honest.finish().milestones == {"greeting": 1.0, "count": 1.0}, name
    assert os.listdir(canary) == ["secret"]
    reading = "\n".join(seen["reads the tests and the solution"])
    assert "greeting" not in reading.replace("greeting.txt", "") and "solve.sh" not in reading
    assert "No space left on device" in seen["fills the disk"][0]
    forks = seen["forks without end"]
    made = int(forks[0].split("stopped after ")[1].split()[0])
    assert "processes: Resource temporarily unavailable" in forks[0] and made < LIMITS.processes
    network = seen["reaches the network and the host"]
    listening.close()
    # the host's own port: refused by the sandbox's own loopback (bubblewrap brings it up; under
    # `namespaces` it stays down: unreachable)
    assert "unreachable" in network[0].lower() and ("refused" in network[1].lower() or "unreachable" in network[1])
    assert "No such file or directory" in network[2]


def test_an_agent_program_that_writes_the_reward_and_kills_the_verifier_scores_0(tmp_path, backend):
    task = load_task(
        write_task(
            tmp_path,
            "runs-agent-code",
            test_sh=RUNS_AGENT_CODE,
            solve_sh="echo 'print(42)' > /app/solve.py",
            toml=ONE_MILESTONE,
        )
    )
    with Episode(
        task, LIMITS, backend=backend
    ) as episode:  # the program the tests will run forges the reward, then kills them
        episode.run(
            'printf \'import os\\nopen("/logs/verifier/reward.txt", "w").write("1")\\n'
            "os.kill(-1, 9)\\n' > /app/solve.py"
        )
        forged = episode.finish()
    if backend == "namespaces":  # test.sh is its pid namespace's init: kill -1 cannot reach it, and it writes 0
        assert forged.reward == 0 and forged.error is None
    else:
        assert forged.reward == 0 and forged.error == "main: test.sh was killed by signal 9: its reward is not trusted"
    with Episode(task, LIMITS, backend=backend) as honest:
        honest.run("echo 'print(42)' > /app/solve.py")
        assert honest.finish().reward == 1.0
