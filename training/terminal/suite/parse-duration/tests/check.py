"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run


def seconds(text):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from duration import parse_duration; print(parse_duration({text!r}))",
    ).stdout.strip()


MILESTONES = {
    "single_units": lambda: [seconds(t) for t in ("90m", "45s", "3h")] == ["5400", "45", "10800"],
    "combined_units": lambda: (
        [seconds(t) for t in ("1h30m", "2h5m10s", "1m1s", "10h0m5s")] == ["5400", "7510", "61", "36005"]
    ),
}

finish(MILESTONES)
