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


def newest(versions):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from versions import newest; print(newest({versions!r}))",
    ).stdout.strip()


MILESTONES = {
    "two_digit_parts": lambda: newest(["1.9.2", "1.10.0"]) == "1.10.0" and newest(["1.2", "1.3"]) == "1.3",
    "major_versions": lambda: newest(["2.0", "10.0", "9.9"]) == "10.0" and newest(["0.9", "0.10", "0.1"]) == "0.10",
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
