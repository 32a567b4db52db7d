"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

import json

from milestones import APP, finish, read, run

EXPECTED = (
    "api debug=False host='api.internal' port=8080 workers=4\n"
    "cache host='cache.internal' port=6379 ttl=300\n"
    "db host='db.internal' pool=10 port=5432 readonly=True\n"
)


MILESTONES = {
    "json_files": lambda: (
        json.loads(read("conf/db.json")) == {"port": 5432, "pool": 10, "readonly": True, "host": "db.internal"}
        and json.loads(read("conf/api.json"))["debug"] is False
        and json.loads(read("conf/cache.json"))["ttl"] == 300
    ),
    "loader_reads_json": lambda: (
        read("conf/api.json") is not None
        and not list((APP / "conf").glob("*.ini"))
        and run("python3", "services/report.py").stdout == EXPECTED
    ),
}

finish(MILESTONES)
