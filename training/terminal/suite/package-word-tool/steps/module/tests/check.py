"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import finish, run


def count(text):
    return run("python3", "-c", f"from wordtool.core import count_words; print(count_words({text!r}))").stdout.strip()


MILESTONES = {
    "module_counts": lambda: [count(t) for t in ("one two", "", "  a\tb\nc  ")] == ["2", "0", "3"],
}

finish(MILESTONES)
