"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run


def median(values):
    return run(
        "python3", "-c", f"import sys; sys.path.insert(0, '/app'); from stats import median; print(median({values!r}))"
    ).stdout.strip()


MILESTONES = {
    "odd_lengths": lambda: [median(v) for v in ([3, 1, 2], [9, 7, 8, 1, 2], [-1])] == ["2", "7", "-1"],
    "even_lengths": lambda: [median(v) for v in ([4, 1, 3, 2], [10, 20], [1, 1, 2, 100])] == ["2.5", "15.0", "1.5"],
    "input_unchanged": lambda: (
        median([4, 1, 3, 2]) == "2.5"
        and run(
            "python3",
            "-c",
            "import sys; sys.path.insert(0, '/app'); from stats import median; v = [3, 1, 2]; median(v); print(v)",
        ).stdout.strip()
        == "[3, 1, 2]"
    ),
}

finish(MILESTONES)
