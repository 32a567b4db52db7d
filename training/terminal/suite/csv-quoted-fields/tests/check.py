"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from pathlib import Path

from milestones import finish, run

HIDDEN = 'email,name\n"quoted@example.com","Doe, ""JD"" Jr."\nplain@example.com,Solo\n'


def hidden():
    (Path("/tmp") / "hidden.csv").write_text(HIDDEN)
    return run("python3", "contacts.py", "/tmp/hidden.csv").stdout.split()


MILESTONES = {
    "provided_file": lambda: (
        run("python3", "contacts.py").stdout.split() == ["ada@example.com", "grace@example.com", "linus@example.com"]
    ),
    "any_quoting": lambda: hidden() == ["quoted@example.com", "plain@example.com"],
}

finish(MILESTONES)
