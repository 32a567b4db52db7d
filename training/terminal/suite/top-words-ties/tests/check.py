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


def top(text, k):
    (Path("/tmp") / "words.txt").write_text(text)
    return run("python3", "topwords.py", "/tmp/words.txt", str(k)).stdout


MILESTONES = {
    "sample": lambda: run("python3", "topwords.py", "sample.txt", "3").stdout == "and 3\nsat 3\nthe 3\n",
    "hidden_text": lambda: (
        top("b a c b a! 'c' B", 2) == "b 3\na 2\n" and top("Zed zed ALPHA alpha beta", 3) == "alpha 2\nzed 2\nbeta 1\n"
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
