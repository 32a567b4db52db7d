"""The test tiers: `pytest -m "not slow"` leaves out the slow modules, the demo store's users and
the Docker backend's tests; a Docker test without a daemon fails saying how to get one, unless
Docker was left out on purpose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each case is a pytest run of its own

ROOT = Path(__file__).resolve().parents[1]
DOCKER_CASE = "tests/training/test_sandbox_redteam.py::test_exit_at_import[docker]"


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        # every test, whichever pass of scripts/test.sh runs this one (tests/conftest.py)
        env={**{k: v for k, v in os.environ.items() if k != "CURRICULAB_TESTS"}, **env},
    )


def test_the_fast_tier_leaves_out_slow_demo_store_and_docker_tests():
    listed = _pytest("-q", "--collect-only", "-m", "not slow").stdout.splitlines()
    ids = [line for line in listed if "::" in line]
    assert len(ids) > 300
    assert not [i for i in ids if i.startswith(("tests/dashboard/test_browser.py", "tests/training/test_grpo.py"))]
    assert not [i for i in ids if "[docker" in i or "test_docker_remote.py" in i]
    assert "tests/test_cli.py::test_demo_runs_the_loop_on_embedded_data" not in ids
    assert not [
        i for i in ids if i.startswith("tests/planner/test_planner.py::test_the_exported_yaml")
    ]  # the demo store's
    assert "tests/training/test_sandbox_redteam.py::test_exit_at_import[bwrap]" in ids  # the sandbox is still in it


def test_a_docker_test_without_a_daemon_fails_saying_how_to_get_one():
    done = _pytest("-q", DOCKER_CASE, DOCKER_HOST="unix:///nonexistent/docker.sock")
    assert done.returncode == 1, done.stdout[-2000:]
    assert "no Docker daemon reachable: run ./scripts/setup.sh as root (it starts dockerd)" in done.stdout


def test_leaving_docker_out_on_purpose_skips_its_tests_saying_so():
    done = _pytest("-q", "-rs", DOCKER_CASE, DOCKER_HOST="unix:///nonexistent/docker.sock", CURRICULAB_SKIP_DOCKER="1")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 skipped" in done.stdout and "CURRICULAB_SKIP_DOCKER=1" in done.stdout
