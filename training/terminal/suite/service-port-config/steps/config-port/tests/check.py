"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

MILESTONES = {
    "port_in_config": lambda: (
        "port = 7070" in read("service.conf").splitlines() and "name = inventory" in read("service.conf")
    ),
}

finish(MILESTONES)
