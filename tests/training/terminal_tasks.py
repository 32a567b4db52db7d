"""Write small Harbor task directories for tests (the real shapes: task.toml, instruction.md,
environment/Dockerfile and its files, tests/test.sh, solution/solve.sh)."""

from __future__ import annotations

from pathlib import Path

MILESTONE_TEST = """#!/bin/bash
# one milestone a file: greeting.txt says hello, count.txt holds data.txt's line count
g=0; c=0
[ "$(cat /app/greeting.txt 2>/dev/null)" = hello ] && g=1
[ "$(cat /app/count.txt 2>/dev/null | tr -d ' ')" = 3 ] && c=1
printf '{"greeting": %d, "count": %d}\\n' $g $c > /logs/verifier/reward.json
"""
ONE_MILESTONE = (
    'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\nnumber_of_milestones = 1\n\n[verifier]\ntimeout_sec = 60.0\n'
)
"""A task.toml for a verifier that writes one number (reward.txt): a bare reward is its one milestone."""
RUNS_AGENT_CODE = """#!/bin/bash
# runs the agent's program, then scores what it printed (the reward file is written last)
out=$(timeout 10 python3 /app/solve.py)
if [ "$out" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""
"""A foreign verifier (not the built-in suite's) that runs the agent's /app/solve.py with its own rights."""
MILESTONE_SOLUTION = """#!/bin/bash
echo hello > /app/greeting.txt
wc -l < /app/data.txt > /app/count.txt
"""


def write_task(
    root: Path,
    name: str = "greet",
    *,
    toml: str | None = None,
    instruction: str = "Write hello to /app/greeting.txt and the line count of /app/data.txt to /app/count.txt.\n",
    dockerfile: str = "FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.txt /app/data.txt\nRUN mkdir -p /app/out\n",
    files: dict[str, str] | None = None,
    test_sh: str = MILESTONE_TEST,
    test_files: dict[str, str] | None = None,
    solve_sh: str | None = MILESTONE_SOLUTION,
) -> Path:
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text(
        toml
        or 'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\ncategory = "file-operations"\n'
        'tags = ["bash"]\nnumber_of_milestones = 2\n\n[verifier]\ntimeout_sec = 60.0\n\n'
        "[agent]\ntimeout_sec = 300.0\n\n[environment]\ncpus = 1\nmemory_mb = 1024\nallow_internet = false\n"
    )
    (task / "instruction.md").write_text(instruction)
    (task / "environment" / "Dockerfile").write_text(dockerfile)
    for relative, text in {"data.txt": "a\nb\nc\n", **(files or {})}.items():
        (task / "environment" / relative).parent.mkdir(parents=True, exist_ok=True)
        (task / "environment" / relative).write_text(text)
    (task / "tests" / "test.sh").write_text(test_sh)
    for relative, text in (test_files or {}).items():
        (task / "tests" / relative).write_text(text)
    if solve_sh is not None:
        (task / "solution").mkdir()
        (task / "solution" / "solve.sh").write_text(solve_sh)
    return task
