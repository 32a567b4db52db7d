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


def check_with(port):
    original = read("service.conf")
    (APP / "service.conf").write_text(original.replace("port = 7070", f"port = {port}"))
    try:
        done = run("python3", "service.py", "--check")
        return done.returncode, done.stdout.strip()
    finally:
        (APP / "service.conf").write_text(original)


MILESTONES = {
    "check_flag": lambda: (
        check_with(7070) == (0, "config ok")
        and check_with("seventy") == (1, "config invalid")
        and check_with(70000) == (1, "config invalid")
        and "--check" in read("README.md")
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
