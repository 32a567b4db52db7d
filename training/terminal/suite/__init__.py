"""The built-in suite of terminal tasks: Harbor task directories, one per folder here, runnable
with bash, coreutils, grep/sed/awk and python3 only (see docs/tasks.md)."""

from pathlib import Path

BUILTIN_SUITE = Path(__file__).resolve().parent
"""The folder holding the built-in tasks (`curriculab tasks check builtin`)."""
