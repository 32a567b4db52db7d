"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run

MILESTONES = {
    "cli_counts": lambda: (
        run("python3", "-m", "wordtool", "texts/one.txt", "texts/two.txt").stdout
        == "4 texts/one.txt\n3 texts/two.txt\n7 total\n"
    ),
}

finish(MILESTONES)
