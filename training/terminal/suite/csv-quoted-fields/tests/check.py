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


HIDDEN = 'email,name\n"quoted@example.com","Doe, ""JD"" Jr."\nplain@example.com,Solo\n'


def hidden():
    (Path("/tmp") / "hidden.csv").write_text(HIDDEN)
    return run("python3", "contacts.py", "/tmp/hidden.csv").stdout.split()


MILESTONES = {
    "provided_file": lambda: (
        run("python3", "contacts.py").stdout.split() == ["ada@example.com", "grace@example.com", "linus@example.com"]
    ),
    "any_quoting": lambda: hidden() == ["quoted@example.com", "plain@example.com"],
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
