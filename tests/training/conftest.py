"""Fixtures the training tests share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.training.problems import builtin_problems


@pytest.fixture
def planned(demo_store_copy, tmp_path) -> tuple[Path, Path]:
    """The demo store and a forward-schedule plan for its weakest model, exported."""
    problems = builtin_problems()
    with Store(demo_store_copy, read_only=True) as store:
        made = planning.build_plan(store, "atlas-7b-coder", problems, "builtin")
    assert made.schedule == "forward" and made.start_tier is None
    return demo_store_copy, planning.export(made, tmp_path / "plan.yaml", problems)


_UNDER_SUBREAPER = """
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: whatever the code orphans comes here
exec(compile(sys.argv[1], "<code under test>", "exec"))
time.sleep(0.2)  # an orphan's last moments
orphans = 0
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if not pid:
        break
    orphans += 1
print(orphans)
"""


@pytest.fixture
def under_subreaper():
    """Runs Python code (with arguments in sys.argv[2:]) in a fresh process that is a child
    subreaper; returns what the code printed (split) and how many orphans came to that process,
    which is what the code would leave to a pid 1 that never reaps (a container without an init)."""

    def run(code: str, *args: str, env: dict | None = None) -> tuple[list[str], int]:
        done = subprocess.run(
            [sys.executable, "-c", _UNDER_SUBREAPER, code, *args], capture_output=True, text=True, timeout=120, env=env
        )
        *printed, orphans = done.stdout.split() or ["?"]
        assert done.returncode == 0 and orphans.isdigit(), done.stderr[-2000:]
        return printed, int(orphans)

    return run
