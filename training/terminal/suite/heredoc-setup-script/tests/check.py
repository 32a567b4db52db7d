"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read, run

MILESTONES = {
    "exact_text": lambda: read("setup.sh") == '#!/bin/bash\necho "home is $HOME"\necho "args: $@"\n',
    "runs": lambda: run("./setup.sh", "a", "b").stdout.endswith("args: a b\n"),
}

finish(MILESTONES)
