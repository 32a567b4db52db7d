"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read, run


def check_with(port):
    original = read("service.conf")
    (APP / "service.conf").write_text(original.replace("port = 7070", f"port = {port}"))
    try:
        done = run("python3", "service.py", "--check")
        return done.returncode, done.stdout.strip()
    finally:
        (APP / "service.conf").write_text(original)


MILESTONES = {
    "check_flag": lambda: (
        check_with(7070) == (0, "config ok")
        and check_with("seventy") == (1, "config invalid")
        and check_with(70000) == (1, "config invalid")
        and "--check" in read("README.md")
    ),
}

finish(MILESTONES)
