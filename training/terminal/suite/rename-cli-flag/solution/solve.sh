#!/bin/bash
set -e
cd /app
python3 - <<'EOF'
from pathlib import Path
p = Path("tool.py")
p.write_text(p.read_text().replace(
    'parser.add_argument("--out", required=True, help="where to write the result")',
    'parser.add_argument("--output", required=True, help="where to write the result")\n'
    'parser.add_argument("--out", dest="output", help=argparse.SUPPRESS)',
).replace("args.out", "args.output").replace('required=True, help="where', 'help="where'))
r = Path("README.md")
r.write_text(r.read_text().replace("--out ", "--output ").replace("`--out`", "`--output`"))
EOF
