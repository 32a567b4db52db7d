"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read, run

MILESTONES = {
    "tests_and_docs": lambda: (
        "python3 -m wordtool" in read("README.md")
        and "Ran " in run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".").stderr
        and run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".").returncode == 0
        and "count_words" in read("tests/test_wordtool.py")
    ),
}

finish(MILESTONES)
