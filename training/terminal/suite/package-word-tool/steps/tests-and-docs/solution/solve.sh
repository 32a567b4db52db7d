#!/bin/bash
set -e
cd /app
mkdir -p tests && touch tests/__init__.py
cat > tests/test_wordtool.py <<'EOF'
import unittest

from wordtool.core import count_words


class CountWords(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(count_words("a b  c"), 3)
        self.assertEqual(count_words(""), 0)
EOF
printf '# wordtool\n\n    python3 -m wordtool FILE...\n' > README.md
python3 -m unittest discover -s tests -t .
