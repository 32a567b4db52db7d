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


def total(items):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from price import total, count; print(total({items!r}), count({items!r}))",
    ).stdout.strip()


MILESTONES = {
    "first_bad_found": lambda: read("first_bad.txt").strip() == "v4",
    "current_fixed": lambda: total([("a", 2, 1.5), ("b", 1, 4.0)]) == "7.0 2" and total([("c", 3, 0.1)]) == "0.3 1",
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
