#!/bin/bash
set -e
cd /app
sed -i 's/sort -r | head -n "$KEEP"/sort -r | tail -n +"$((KEEP + 1))"/' rotate.sh
./rotate.sh
