#!/bin/bash
set -e
cd /app
cat > topwords.py <<'EOF'
import string
import sys
from collections import Counter

words = (w.strip(string.punctuation).lower() for w in open(sys.argv[1]).read().split())
counts = Counter(w for w in words if w)
for word, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: int(sys.argv[2])]:
    print(word, count)
EOF
bash run_tests.sh
