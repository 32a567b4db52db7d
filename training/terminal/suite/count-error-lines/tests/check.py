"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read


def lines():
    return (read("report.txt") or "").split("\n")


MILESTONES = {
    "report_shape": lambda: (
        [line.split()[0] for line in lines() if line.strip()] == ["api.log", "db.log", "worker.log"]
    ),
    "counts_right": lambda: (
        [line.split() for line in lines() if line.strip()] == [["api.log", "2"], ["db.log", "0"], ["worker.log", "3"]]
    ),
}

finish(MILESTONES)
