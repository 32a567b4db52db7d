#!/usr/bin/env bash
# Every check, after scripts/setup.sh: lint and format (ruff), the import layers (lint-imports, on
# the checkout itself), types (mypy, strict where pyproject.toml says) and the test suite. mypy, the
# slowest static check (about 40 s from a cold cache), runs beside the tests; both must pass, and its
# report is printed after theirs. Arguments go to pytest (`./scripts/test.sh -m "not slow"` for the
# fast tier).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/lint-imports --no-cache --no-logo
types_report=$(mktemp)
.venv/bin/mypy >"$types_report" 2>&1 &
types=$!
tests_status=0
.venv/bin/python -m pytest -q "$@" || tests_status=$?
types_status=0
wait "$types" || types_status=$?
cat "$types_report"
rm -f "$types_report"
if [ "$tests_status" -ne 0 ]; then exit "$tests_status"; fi
exit "$types_status"
