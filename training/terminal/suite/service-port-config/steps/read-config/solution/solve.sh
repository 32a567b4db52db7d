#!/bin/bash
set -e
cd /app
cat > service.py <<'EOF'
import sys


def settings(path="/app/service.conf"):
    values = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def describe():
    config = settings()
    return f"{config['name']} listening on {config['port']}"


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        config = settings()
        ok = config.get("port", "").isdigit() and 0 < int(config["port"]) < 65536
        print("config ok" if ok else "config invalid")
        sys.exit(0 if ok else 1)
    print(describe())
EOF
