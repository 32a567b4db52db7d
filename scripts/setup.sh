#!/usr/bin/env bash
# Set up everything curriculab and its test suite need, in ./.venv. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
# bubblewrap sandboxes model-generated code (training/sandbox); the system python3 runs inside it.
if ! command -v bwrap >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
command -v bwrap >/dev/null 2>&1 || echo "warning: bubblewrap missing; code would run only under rlimits (status 'unsandboxed')" >&2
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# The analysis half, the Inspect AI reader (optional extra, tested here) and the test tools.
.venv/bin/pip install --quiet --disable-pip-version-check -e ".[inspect,test]"
.venv/bin/curriculab --version
