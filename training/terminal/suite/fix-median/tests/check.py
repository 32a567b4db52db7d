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


def median(values):
    return run(
        "python3", "-c", f"import sys; sys.path.insert(0, '/app'); from stats import median; print(median({values!r}))"
    ).stdout.strip()


MILESTONES = {
    "odd_lengths": lambda: [median(v) for v in ([3, 1, 2], [9, 7, 8, 1, 2], [-1])] == ["2", "7", "-1"],
    "even_lengths": lambda: [median(v) for v in ([4, 1, 3, 2], [10, 20], [1, 1, 2, 100])] == ["2.5", "15.0", "1.5"],
    "input_unchanged": lambda: (
        median([4, 1, 3, 2]) == "2.5"
        and run(
            "python3",
            "-c",
            "import sys; sys.path.insert(0, '/app'); from stats import median; v = [3, 1, 2]; median(v); print(v)",
        ).stdout.strip()
        == "[3, 1, 2]"
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
