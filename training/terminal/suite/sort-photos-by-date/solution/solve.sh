#!/bin/bash
set -e
cd /app
for f in inbox/IMG_*.jpg; do
  d=$(basename "$f" | cut -d_ -f2); mkdir -p "photos/${d:0:4}/${d:4:2}"; mv "$f" "photos/${d:0:4}/${d:4:2}/"
done
