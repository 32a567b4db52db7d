"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read, run


def total(items):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from price import total, count; print(total({items!r}), count({items!r}))",
    ).stdout.strip()


MILESTONES = {
    "first_bad_found": lambda: read("first_bad.txt").strip() == "v4",
    "current_fixed": lambda: total([("a", 2, 1.5), ("b", 1, 4.0)]) == "7.0 2" and total([("c", 3, 0.1)]) == "0.3 1",
}

finish(MILESTONES)
