"""Milestones of this task, checked from the files the agent left; reward.json is written last."""

import json
import subprocess
from pathlib import Path

APP = Path("/app")


def read(name):
    try:
        return (APP / name).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def run(*args, stdin=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=20, cwd=APP, input=stdin)


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


def score():
    results = {}
    for name, check in MILESTONES.items():
        try:
            results[name] = 1 if check() else 0
        except Exception:  # a broken deliverable fails its milestone, never the verifier
            results[name] = 0
    return results


Path("/logs/verifier/reward.json").write_text(json.dumps(score()))
