#!/bin/bash
set -e
cd /app
python3 - <<'EOF'
from pathlib import Path
p = Path("contacts.py")
s = p.read_text().replace("import sys", "import csv\nimport sys", 1)
start = s.index("def emails")
end = s.index("if __name__")
p.write_text(s[:start] + "def emails(path):\n    with open(path, newline='') as handle:\n        return [row['email'] for row in csv.DictReader(handle)]\n\n\n" + s[end:])
EOF
bash run_tests.sh
