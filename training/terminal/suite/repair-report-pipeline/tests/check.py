"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run

MILESTONES = {
    "runs": lambda: run("python3", "report.py").returncode == 0,
    "totals_right": lambda: run("python3", "report.py").stdout == "east 16\nnorth 2\nwest 8\n",
}

finish(MILESTONES)
