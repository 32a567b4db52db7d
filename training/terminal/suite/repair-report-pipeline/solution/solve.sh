#!/bin/bash
set -e
cd /app
printf '[input]\npath = /app/data/sales.tsv\ndelimiter = \\t\n' > report.ini
python3 - <<'EOF'
import re
from pathlib import Path
p = Path("report.py")
s = p.read_text().replace('delimiter=section["delimiter"]', 'delimiter=section["delimiter"].encode().decode("unicode_escape")')
p.write_text(re.sub(r"(\n\s*next\(rows\))\n\s*next\(rows\)", r"\1", s, count=1))
EOF
