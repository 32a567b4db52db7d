"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

import json

from milestones import finish, read


def rows(name):
    import csv
    import io

    return list(csv.reader(io.StringIO(read(name))))


MILESTONES = {
    "clean_rows": lambda: (
        rows("clean/customers.csv")
        == [
            ["id", "email", "signup"],
            ["1", "ada@example.com", "2024-01-05"],
            ["2", "bob@example.com", "2024-02-05"],
            ["5", "cy@example.com", "2024-02-29"],
            ["8", "eve@example.com", "2023-12-31"],
        ]
    ),
    "rejects": lambda: (
        rows("clean/rejects.csv")
        == [["id", "email", "signup"], ["4", "not-an-email", "2024-01-01"], ["6", "dee@example.com", "31/02/2024"]]
    ),
    "stats": lambda: json.loads(read("clean/stats.json")) == {"input": 8, "clean": 4, "duplicates": 2, "rejects": 2},
}

finish(MILESTONES)
