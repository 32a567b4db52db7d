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


def seconds(text):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from duration import parse_duration; print(parse_duration({text!r}))",
    ).stdout.strip()


MILESTONES = {
    "single_units": lambda: [seconds(t) for t in ("90m", "45s", "3h")] == ["5400", "45", "10800"],
    "combined_units": lambda: (
        [seconds(t) for t in ("1h30m", "2h5m10s", "1m1s", "10h0m5s")] == ["5400", "7510", "61", "36005"]
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
