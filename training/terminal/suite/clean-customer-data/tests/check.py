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


def rows(name):
    import csv
    import io

    return list(csv.reader(io.StringIO(read(name))))


MILESTONES = {
    "clean_rows": lambda: (
        rows("clean/customers.csv")
        == [
            ["id", "email", "signup"],
            ["1", "ada@example.com", "2024-01-05"],
            ["2", "bob@example.com", "2024-02-05"],
            ["5", "cy@example.com", "2024-02-29"],
            ["8", "eve@example.com", "2023-12-31"],
        ]
    ),
    "rejects": lambda: (
        rows("clean/rejects.csv")
        == [["id", "email", "signup"], ["4", "not-an-email", "2024-01-01"], ["6", "dee@example.com", "31/02/2024"]]
    ),
    "stats": lambda: json.loads(read("clean/stats.json")) == {"input": 8, "clean": 4, "duplicates": 2, "rejects": 2},
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
