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


def slug(text):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from textutil import slugify; print(slugify({text!r}))",
    ).stdout.strip()


MILESTONES = {
    "suite_passes": lambda: (
        run("bash", "run_tests.sh").returncode == 0
        and "hello-world" in read("tests/test_slug.py")
        and "c-est-la-vie" in read("tests/test_slug.py")
    ),
    "hidden_cases": lambda: (
        [slug(t) for t in ("Ünïcode Title", "x__y", "--edge--", "Mixed CASE 42")]
        == ["n-code-title", "x-y", "edge", "mixed-case-42"]
    ),
    "legacy_untouched": lambda: (
        slug("C'est la vie!") == "c-est-la-vie"
        and "hello_world" in read("tests_legacy/test_old.py")
        and (APP / "tests_legacy/test_old.py").is_file()
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
