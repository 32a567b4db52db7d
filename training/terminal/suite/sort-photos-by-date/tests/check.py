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


EXPECTED = {
    "photos/2024/01/IMG_20240105_1.jpg": "a",
    "photos/2024/01/IMG_20240105_2.jpg": "b",
    "photos/2024/02/IMG_20240217_1.jpg": "c",
    "photos/2023/12/IMG_20231230_1.jpg": "d",
    "photos/2023/12/IMG_20231201_7.jpg": "e",
}


MILESTONES = {
    "all_placed": lambda: all((read(p) or "").strip() == c for p, c in EXPECTED.items()),
    "inbox_empty": lambda: (APP / "inbox").is_dir() and not any((APP / "inbox").iterdir()),
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
