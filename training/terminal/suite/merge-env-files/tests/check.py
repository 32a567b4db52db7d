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


def merged():
    lines = [line for line in (read(".env") or "").splitlines() if line.strip()]
    return dict(line.split("=", 1) for line in lines), len(lines)


MILESTONES = {
    "overrides_applied": lambda: (
        {k: merged()[0].get(k) for k in ("PORT", "LOG_LEVEL", "FEATURE_X")}
        == {"PORT": "9000", "LOG_LEVEL": "debug", "FEATURE_X": "on"}
    ),
    "defaults_kept_once": lambda: (
        merged() == ({"HOST": "0.0.0.0", "PORT": "9000", "LOG_LEVEL": "debug", "WORKERS": "2", "FEATURE_X": "on"}, 5)
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
