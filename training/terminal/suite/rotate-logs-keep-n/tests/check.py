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


MILESTONES = {
    "newest_kept": lambda: (
        sorted(p.name for p in (APP / "logs").iterdir())
        == ["app-2024-01-15.log", "app-2024-02-10.log", "app-2024-02-15.log"]
    ),
    "script_fixed": lambda: (
        "KEEP=3" in read("rotate.conf")
        and run("bash", "rotate.sh").returncode == 0
        and len(list((APP / "logs").iterdir())) == 3
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
