#!/bin/bash
set -e
cd /app
python3 - <<'EOF'
import json, sys
sys.path.insert(0, "/app")
from loader import load
for name in ("api", "cache", "db"):
    json.dump(load(name), open(f"/app/conf/{name}.json", "w"), indent=2)
EOF
cat > loader.py <<'EOF'
import json


def load(name):
    with open(f"/app/conf/{name}.json") as handle:
        return json.load(handle)
EOF
rm conf/*.ini
python3 services/report.py
