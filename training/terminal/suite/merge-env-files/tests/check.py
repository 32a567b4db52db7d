"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, read


def merged():
    lines = [line for line in (read(".env") or "").splitlines() if line.strip()]
    return dict(line.split("=", 1) for line in lines), len(lines)


MILESTONES = {
    "overrides_applied": lambda: (
        {k: merged()[0].get(k) for k in ("PORT", "LOG_LEVEL", "FEATURE_X")}
        == {"PORT": "9000", "LOG_LEVEL": "debug", "FEATURE_X": "on"}
    ),
    "defaults_kept_once": lambda: (
        merged() == ({"HOST": "0.0.0.0", "PORT": "9000", "LOG_LEVEL": "debug", "WORKERS": "2", "FEATURE_X": "on"}, 5)
    ),
}

finish(MILESTONES)
