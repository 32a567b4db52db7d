#!/bin/bash
set -e
cd /app
tail -n +2 sales.csv | cut -d, -f2 | tr 'A-Z' 'a-z' | tr -d ' ' | sort -u > regions.txt
