#!/bin/bash
set -e
cd /app
mkdir -p wordtool && touch wordtool/__init__.py
printf 'def count_words(text):\n    return len(text.split())\n' > wordtool/core.py
