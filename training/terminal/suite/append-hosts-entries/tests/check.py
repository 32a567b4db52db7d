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


ORIGINAL = ["127.0.0.1 localhost", "10.0.0.2 db.internal", "10.0.0.3 api.internal"]
NEW = ["10.0.0.5 cache.internal", "10.0.0.6 queue.internal"]


def entries():
    return [" ".join(line.split()) for line in (read("hosts") or "").splitlines() if line.strip()]


MILESTONES = {
    "entries_appended": lambda: entries()[-2:] == NEW,
    "nothing_lost": lambda: entries() == ORIGINAL + NEW,
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
