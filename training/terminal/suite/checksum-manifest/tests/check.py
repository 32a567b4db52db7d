"""Milestones of this task, checked from the files the agent left; reward.json is written last."""

import json
import subprocess
from pathlib import Path

APP = Path("/app")


def read(name):
    try:
        return (APP / name).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def run(*args, stdin=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=20, cwd=APP, input=stdin)


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


def score():
    results = {}
    for name, check in MILESTONES.items():
        try:
            results[name] = 1 if check() else 0
        except Exception:  # a broken deliverable fails its milestone, never the verifier
            results[name] = 0
    return results


Path("/logs/verifier/reward.json").write_text(json.dumps(score()))
