"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run


def newest(versions):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from versions import newest; print(newest({versions!r}))",
    ).stdout.strip()


MILESTONES = {
    "two_digit_parts": lambda: newest(["1.9.2", "1.10.0"]) == "1.10.0" and newest(["1.2", "1.3"]) == "1.3",
    "major_versions": lambda: newest(["2.0", "10.0", "9.9"]) == "10.0" and newest(["0.9", "0.10", "0.1"]) == "0.10",
}

finish(MILESTONES)
