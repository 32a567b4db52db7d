"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

import subprocess

from milestones import APP, finish, read


def entries():
    return [line.split(None, 1) for line in (read("release/MANIFEST.sha256") or "").splitlines()]


MILESTONES = {
    "verifies": lambda: (
        subprocess.run(["sha256sum", "-c", "MANIFEST.sha256"], cwd=APP / "release", capture_output=True).returncode == 0
    ),
    "every_file_once_sorted": lambda: (
        [p.strip().lstrip("*") for _, p in entries()] == ["README.md", "app.tar", "docs/guide.txt"]
    ),
}

finish(MILESTONES)
