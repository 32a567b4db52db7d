"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

import json

from milestones import finish, read


def config():
    return json.loads(read("config.json"))


MILESTONES = {
    "values_set": lambda: config()["port"] == 8080 and config()["debug"] is False,
    "rest_unchanged": lambda: (
        config()["port"] == 8080
        and {k: v for k, v in config().items() if k not in ("port", "debug")}
        == {"name": "billing", "workers": 4, "db": {"host": "db.internal", "pool": 10}}
    ),
}

finish(MILESTONES)
