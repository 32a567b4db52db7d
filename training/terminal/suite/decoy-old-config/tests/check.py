"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read

MILESTONES = {
    "live_config_changed": lambda: read("config/app.yaml") == "name: shop\ntimeout: 30\nretries: 2\n",
    "decoy_untouched": lambda: (
        "timeout: 30" in read("config/app.yaml")
        and read("config.old/app.yaml") == "name: shop\ntimeout: 5\nretries: 2\n"
    ),
}

finish(MILESTONES)
