"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read

MILESTONES = {
    "summary_right": lambda: read("summary.txt").split() == ["rows", "3", "total", "35"],
    "raw_data_kept": lambda: (
        read("summary.txt") is not None and sorted(p.name for p in (APP / "data/raw").iterdir()) == ["a.csv", "b.csv"]
    ),
}

finish(MILESTONES)
