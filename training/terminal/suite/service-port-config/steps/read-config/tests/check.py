"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read, run


def with_port(port):
    original = read("service.conf")
    (APP / "service.conf").write_text(original.replace("port = 7070", f"port = {port}"))
    try:
        return run("python3", "service.py").stdout.strip()
    finally:
        (APP / "service.conf").write_text(original)


MILESTONES = {
    "reads_config": lambda: (
        run("python3", "service.py").stdout.strip() == "inventory listening on 7070"
        and with_port(6060) == "inventory listening on 6060"
    ),
}

finish(MILESTONES)
