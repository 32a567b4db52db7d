#!/bin/bash
set -e
cd /app
cat > wordtool/__main__.py <<'EOF'
import sys

from wordtool.core import count_words

total = 0
for name in sys.argv[1:]:
    count = count_words(open(name).read())
    total += count
    print(count, name)
print(total, "total")
EOF
