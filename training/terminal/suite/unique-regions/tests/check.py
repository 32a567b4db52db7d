"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

MILESTONES = {
    "one_per_line_no_header": lambda: (
        "region" not in read("regions.txt") and len((read("regions.txt") or "").split()) == 4
    ),
    "normalised_and_sorted": lambda: read("regions.txt").split() == ["east", "north", "south", "west"],
}

finish(MILESTONES)
