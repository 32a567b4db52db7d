"""Episodes on Docker beyond what the shared episode tests run there: a task in its own image (one
the daemon already has, never pulled), and a daemon reached over TCP as a remote one would be."""

from __future__ import annotations

import io

import pytest

from curriculab.training.terminal import Episode, check_task, load_task, readiness
from curriculab.training.terminal.docker import client, host_tools_image
from tests.training.terminal_tasks import write_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PREBUILT = "curriculab-test/prebuilt:1"
GONE_TEST = """#!/bin/bash
g=0; d=0
[ "$(cat /app/greeting.txt 2>/dev/null)" = hello ] && g=1
[ -e /app/data.txt ] || d=1
printf '{"greeting": %d, "data_gone": %d}' $g $d > /logs/verifier/reward.json
"""
GONE_SOLUTION = "#!/bin/bash\necho hello > /app/greeting.txt && rm /app/data.txt\n"
# The task's Dockerfile installs what this machine lacks: only its own image can run it.
NEEDS_ITS_IMAGE = (
    "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y curriculab-no-such-package\n"
    "WORKDIR /app\nCOPY data.txt /app/data.txt\nRUN mkdir -p /app/out\n"
)


@pytest.fixture
def docker_client(require_docker):
    found = client()
    require_docker(found is not None)
    return found


def _prebuilt_task(tmp_path, docker_client):
    # the image as a build elsewhere would leave it: the Dockerfile's files and folders in place
    base = host_tools_image(docker_client)
    recipe = f"FROM {base}\nRUN mkdir -p /app/out && printf 'a\\nb\\nc\\n' > /app/data.txt\nWORKDIR /app\n"
    docker_client.images.build(fileobj=io.BytesIO(recipe.encode()), tag=PREBUILT, rm=True)
    toml = (
        'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n\n[verifier]\ntimeout_sec = 60.0\n\n'
        f'[environment]\ndocker_image = "{PREBUILT}"\n'
    )
    return load_task(
        write_task(
            tmp_path, "prebuilt", toml=toml, dockerfile=NEEDS_ITS_IMAGE, test_sh=GONE_TEST, solve_sh=GONE_SOLUTION
        )
    )


def test_a_task_runs_in_its_own_image_when_the_daemon_has_it(tmp_path, docker_client):
    task = _prebuilt_task(tmp_path, docker_client)
    assert readiness(task) == ["needs its image: apt packages missing here: curriculab-no-such-package"]
    assert readiness(task, "docker", image_present=True) == []
    with Episode(task, backend="docker", docker_client=docker_client) as episode:
        assert episode.run("ls; cat data.txt | wc -l").output == "data.txt\nout\n3\n"  # the image's files, no replay
        episode.run("rm data.txt")
        result = episode.finish()
    # the judge sees what the agent left, deletions included, not the image's files again
    assert result.milestones == {"greeting": 0.0, "data_gone": 1.0}
    report = check_task(task.path, backend="docker")
    assert report.ok and report.oracle.milestones == {"greeting": 1.0, "data_gone": 1.0}
    assert report.nop.milestones == {"greeting": 0.0, "data_gone": 0.0}


def test_episodes_run_on_a_daemon_reached_over_tcp_with_mutual_tls(tmp_path, docker_client, monkeypatch):
    from curriculab.training.sandbox.docker_backend import client
    from tests.docker_tls import tls_docker

    task = load_task(write_task(tmp_path))
    with tls_docker(tmp_path / "certs") as env:  # no daemon here listens on TCP: a TLS listener of the test's
        for name, value in env.items():  # as `tasks check --backend docker` finds it
            monkeypatch.setenv(name, value)
        remote = client()
        assert remote is not None and remote.api.base_url.startswith("https://127.0.0.1:")
        with Episode(task, oracle=True, backend="docker", docker_client=remote) as episode:
            assert episode.run("bash /solution/solve.sh").exit_code == 0
            assert episode.finish().reward == 1.0
        assert check_task(task.path, backend="docker").ok
