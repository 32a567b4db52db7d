#!/usr/bin/env bash
# Set up everything curriculab and its test suite need, in ./.venv. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# The analysis half, the Inspect AI reader (optional extra, tested here) and the test tools.
.venv/bin/pip install --quiet --disable-pip-version-check -e ".[inspect,test]"
.venv/bin/curriculab --version
