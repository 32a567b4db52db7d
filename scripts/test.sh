#!/usr/bin/env bash
# Every check, after scripts/setup.sh: lint and format (ruff), types (mypy, strict where
# pyproject.toml says), the import layers (lint-imports, on the checkout itself), then the test
# suite. Arguments go to pytest (`./scripts/test.sh -m "not slow"` for the fast tier).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/mypy
.venv/bin/lint-imports --no-cache --no-logo
.venv/bin/python -m pytest -q "$@"
