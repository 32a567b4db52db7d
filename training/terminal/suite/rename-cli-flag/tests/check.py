"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read, run


def writes(flag, target):
    done = run("python3", "tool.py", "notes.txt", flag, target)
    return done.returncode == 0 and read(target) == "SHOUT THIS\n"


MILESTONES = {
    "output_flag": lambda: writes("--output", "/tmp/a.txt") and "--output" in run("python3", "tool.py", "-h").stdout,
    "alias_kept_hidden": lambda: (
        writes("--out", "/tmp/b.txt") and "--out " not in run("python3", "tool.py", "-h").stdout
    ),
    "docs_updated": lambda: "--output" in read("README.md") and "--out " not in read("README.md"),
}

finish(MILESTONES)
