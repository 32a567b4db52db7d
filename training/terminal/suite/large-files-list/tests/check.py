"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

MILESTONES = {
    "relative_paths": lambda: all(not line.startswith("/") for line in read("large.txt").split()),
    "exactly_the_large_files": lambda: read("large.txt").split() == ["a/huge.log", "b/c/deep.dat", "big.bin"],
}

finish(MILESTONES)
