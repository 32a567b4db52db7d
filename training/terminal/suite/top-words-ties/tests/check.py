"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from pathlib import Path

from milestones import finish, run


def top(text, k):
    (Path("/tmp") / "words.txt").write_text(text)
    return run("python3", "topwords.py", "/tmp/words.txt", str(k)).stdout


MILESTONES = {
    "sample": lambda: run("python3", "topwords.py", "sample.txt", "3").stdout == "and 3\nsat 3\nthe 3\n",
    "hidden_text": lambda: (
        top("b a c b a! 'c' B", 2) == "b 3\na 2\n" and top("Zed zed ALPHA alpha beta", 3) == "alpha 2\nzed 2\nbeta 1\n"
    ),
}

finish(MILESTONES)
