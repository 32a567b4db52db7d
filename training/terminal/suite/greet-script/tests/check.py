"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, run

MILESTONES = {
    "executable": lambda: (APP / "bin/greet.sh").stat().st_mode & 0o111 != 0,
    "greets": lambda: (
        run("bin/greet.sh", "Ada Lovelace").stdout == "Hello, Ada Lovelace!\n"
        and run("bin/greet.sh").stdout == "Hello, world!\n"
        and run("bin/greet.sh", "  two  spaces ").stdout == "Hello,   two  spaces !\n"
    ),
}

finish(MILESTONES)
