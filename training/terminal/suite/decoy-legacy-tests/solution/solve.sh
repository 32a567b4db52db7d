#!/bin/bash
set -e
cd /app
cat > textutil.py <<'EOF'
import re


def slugify(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
EOF
bash run_tests.sh
