"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read

MILESTONES = {
    "temp_skipped": lambda: (
        sorted(p.name for p in (APP / "backups/latest").iterdir()) == ["orders.csv", "users.csv"]
        and "SOURCE=/app/data" in read("backup.conf")
    ),
}

finish(MILESTONES)
