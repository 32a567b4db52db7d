"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

import json

from milestones import APP, finish, read, run


def status():
    return json.loads(read("out/status.json"))


def regenerated():
    log = APP / "access.log"
    original = log.read_text()
    log.write_text(original + original.splitlines()[3] + "\n")  # one more 500 from 10.0.0.3
    try:
        for name in ("out/status.json", "out/top_clients.txt"):
            (APP / name).unlink(missing_ok=True)
        if run("./audit.sh").returncode != 0:
            return False
        return status()["500"] == 3 and read("out/top_clients.txt").split("\n")[1:3] == ["10.0.0.2 3", "10.0.0.3 3"]
    finally:
        log.write_text(original)


MILESTONES = {
    "status_counts": lambda: status() == {"200": 7, "401": 1, "500": 2, "404": 1, "304": 1},
    "top_clients": lambda: read("out/top_clients.txt") == "10.0.0.1 5\n10.0.0.2 3\n10.0.0.3 2\n",
    "script_regenerates": regenerated,
}

finish(MILESTONES)
