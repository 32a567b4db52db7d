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


def writes(flag, target):
    done = run("python3", "tool.py", "notes.txt", flag, target)
    return done.returncode == 0 and read(target) == "SHOUT THIS\n"


MILESTONES = {
    "output_flag": lambda: writes("--output", "/tmp/a.txt") and "--output" in run("python3", "tool.py", "-h").stdout,
    "alias_kept_hidden": lambda: (
        writes("--out", "/tmp/b.txt") and "--out " not in run("python3", "tool.py", "-h").stdout
    ),
    "docs_updated": lambda: "--output" in read("README.md") and "--out " not in read("README.md"),
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
