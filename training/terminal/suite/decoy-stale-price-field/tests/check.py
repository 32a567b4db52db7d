"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

MILESTONES = {
    "two_decimals": lambda: len(read("total.txt").strip().split(".")[1]) == 2,
    "uses_price": lambda: read("total.txt").strip() == "48.54",
}

finish(MILESTONES)
