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
# Two passes (tests/conftest.py). First, two workers: the tests that start sandboxes, episodes or
# trainers run on one, one after another, the rest beside them on the other (ON_THE_MACHINE_WORKER).
# Then, alone, the tests that count every sandbox process on the host after a teardown (ALONE).
# A pass with nothing to run (exit 5: a path or -k that selects only the other pass's) is no failure.
CURRICULAB_TESTS=shared .venv/bin/python -m pytest -q -n 2 --dist loadgroup "$@" || tests_status=$?
alone_status=0
CURRICULAB_TESTS=alone .venv/bin/python -m pytest -q "$@" || alone_status=$?
if [ "$tests_status" -eq 5 ] && [ "$alone_status" -ne 5 ]; then tests_status=0; fi
if [ "$alone_status" -ne 0 ] && [ "$alone_status" -ne 5 ] && [ "$tests_status" -eq 0 ]; then tests_status=$alone_status; fi
types_status=0
wait "$types" || types_status=$?
cat "$types_report"
rm -f "$types_report"
if [ "$tests_status" -ne 0 ]; then exit "$tests_status"; fi
exit "$types_status"
