"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read, run

MILESTONES = {
    "newest_kept": lambda: (
        sorted(p.name for p in (APP / "logs").iterdir())
        == ["app-2024-01-15.log", "app-2024-02-10.log", "app-2024-02-15.log"]
    ),
    "script_fixed": lambda: (
        "KEEP=3" in read("rotate.conf")
        and run("bash", "rotate.sh").returncode == 0
        and len(list((APP / "logs").iterdir())) == 3
    ),
}

finish(MILESTONES)
