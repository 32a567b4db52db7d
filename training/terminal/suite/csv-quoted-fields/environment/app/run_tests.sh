#!/bin/bash
set -e
for t in /app/tests/test_*.py; do python3 "$t"; done
