"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish

MILESTONES = {
    "backup_made": lambda: (
        sorted(p.name for p in (APP / "backups/latest").iterdir())
        in (["cache.tmp", "orders.csv", "users.csv"], ["orders.csv", "users.csv"])
    ),
}

finish(MILESTONES)
