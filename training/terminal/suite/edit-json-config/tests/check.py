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


def config():
    return json.loads(read("config.json"))


MILESTONES = {
    "values_set": lambda: config()["port"] == 8080 and config()["debug"] is False,
    "rest_unchanged": lambda: (
        config()["port"] == 8080
        and {k: v for k, v in config().items() if k not in ("port", "debug")}
        == {"name": "billing", "workers": 4, "db": {"host": "db.internal", "pool": 10}}
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
