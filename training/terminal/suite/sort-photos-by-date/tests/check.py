"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read

EXPECTED = {
    "photos/2024/01/IMG_20240105_1.jpg": "a",
    "photos/2024/01/IMG_20240105_2.jpg": "b",
    "photos/2024/02/IMG_20240217_1.jpg": "c",
    "photos/2023/12/IMG_20231230_1.jpg": "d",
    "photos/2023/12/IMG_20231201_7.jpg": "e",
}


MILESTONES = {
    "all_placed": lambda: all((read(p) or "").strip() == c for p, c in EXPECTED.items()),
    "inbox_empty": lambda: (APP / "inbox").is_dir() and not any((APP / "inbox").iterdir()),
}

finish(MILESTONES)
