#!/bin/bash
set -e
cd /app
cat > finance.py <<'EOF'
def compound(principal, rate, years):
    return round(principal * (1 + rate) ** years, 2)
EOF
bash run_tests.sh
