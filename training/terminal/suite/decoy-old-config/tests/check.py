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
    "live_config_changed": lambda: read("config/app.yaml") == "name: shop\ntimeout: 30\nretries: 2\n",
    "decoy_untouched": lambda: (
        "timeout: 30" in read("config/app.yaml")
        and read("config.old/app.yaml") == "name: shop\ntimeout: 5\nretries: 2\n"
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
