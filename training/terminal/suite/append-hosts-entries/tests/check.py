"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

ORIGINAL = ["127.0.0.1 localhost", "10.0.0.2 db.internal", "10.0.0.3 api.internal"]
NEW = ["10.0.0.5 cache.internal", "10.0.0.6 queue.internal"]


def entries():
    return [" ".join(line.split()) for line in (read("hosts") or "").splitlines() if line.strip()]


MILESTONES = {
    "entries_appended": lambda: entries()[-2:] == NEW,
    "nothing_lost": lambda: entries() == ORIGINAL + NEW,
}

finish(MILESTONES)
