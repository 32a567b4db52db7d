"""Rewards for terminal episodes: plain callables TRL calls with `environments=` (instances of
`TerminalEnvironment`), one float per rollout, None where the environment itself failed.

- `milestone_reward`: the share of the task's milestones the verifier passed (a multi-step task's
  `multi_step_reward_strategy` respected: `final` counts the last step's milestones only).
- `pass_reward`: 1 when every milestone passed, else 0.
- `verification_reward`: the process rubric for `skipped_verification`. 1 when the agent changed
  something and, after its last change, ran a check: a test runner (pytest, `python3 -m
  unittest`, `make test`, `npm test`, `cargo test`, `go test`, tox, nox), a script whose name
  says test (`bash run_tests.sh`), or what it changed itself (`python3 stats.py`, `./bin/greet.sh`,
  `python3 -c "import stats; …"`). Changes are what the environment saw on disk after each
  command (caches such as `__pycache__` and `.pytest_cache` are not changes); within one command,
  parts run in order (`sed -i … && pytest` checks after its edit, `pytest; sed -i …` does not).
  Not a check: a word that is not a command (`echo pytest`, a comment), `--help`/`--version`/
  `--collect-only`, a command the shell could not find or run (exit 126 or 127).
  How it could still be gamed: a script the agent wrote itself and ran counts as running what it
  changed, even if it checks nothing; the outcome rewards, not this one, pay for a working result.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from curriculab.trajectory.actions import normalise_shell, strip_wrappers

INCIDENTAL = re.compile(
    r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.coverage|\.cache)(/|$)|\.py[co]$"
)
"""Files a check writes as a side effect: never an edit."""
_RUNNERS = {"pytest", "py.test", "tox", "nox"}
_SUBCOMMAND_RUNNERS = {"make", "npm", "yarn", "pnpm", "cargo", "go"}
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
_NOT_A_RUN = {"--help", "-h", "--version", "-V", "--collect-only", "--co"}


def _words(text: str) -> list[str]:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    return strip_wrappers(words)


def _names(path: str, edited: set[str]) -> bool:
    """Whether a command's argument names one of the files the agent changed (by path suffix)."""
    tail = path.lstrip("./")
    return bool(tail) and any(e == path or e.endswith("/" + tail) for e in edited)


def is_check(part: str, edited: set[str]) -> bool:
    """Whether one shell command (a part of a command line) runs a check, as the rubric counts it."""
    words = _words(part)
    if not words or any(w in _NOT_A_RUN for w in words[1:]):
        return False
    head, args = words[0], words[1:]
    base = head.rsplit("/", 1)[-1]
    if base in _RUNNERS:
        return True
    if base in _SUBCOMMAND_RUNNERS:
        return "test" in args[:2]
    operands = [a for a in args if not a.startswith("-")]
    if _PYTHON.match(base):
        if "-m" in args and args.index("-m") + 1 < len(args):
            return args[args.index("-m") + 1] in ("pytest", "unittest", "doctest")
        if "-c" in args and args.index("-c") + 1 < len(args):
            code = args[args.index("-c") + 1]
            stems = {e.rsplit("/", 1)[-1].removesuffix(".py") for e in edited if e.endswith(".py")}
            return any(re.search(rf"\b(import|from)\s+{re.escape(stem)}\b", code) for stem in stems)
        script = operands[0] if operands else ""
        return bool(script) and ("test" in script.rsplit("/", 1)[-1] or _names(script, edited))
    if base in ("bash", "sh"):
        script = operands[0] if operands else ""
        return bool(script) and ("test" in script.rsplit("/", 1)[-1] or _names(script, edited))
    if "/" in head:  # ./run_tests.sh, /app/bin/greet.sh
        return "test" in base or _names(head, edited)
    return False


def verified_after_last_edit(commands: list[Any]) -> bool:
    """The rubric itself, over an observing episode's commands (`CommandResult`s, in order)."""
    edited: set[str] = set()
    for command in commands:
        edited.update(p for p in command.changed if not INCIDENTAL.search(p))
    if not edited:
        return False
    last_edit, last_check = (-1, -1), (-1, -1)
    for index, command in enumerate(commands):
        parts = normalise_shell(command.command)
        runnable = command.exit_code not in (126, 127)
        checks = [k for k, part in enumerate(parts) if runnable and is_check(part.command or "", edited)]
        if checks:
            last_check = (index, checks[-1])
        if any(not INCIDENTAL.search(p) for p in command.changed):
            # the change happened at the last part that can write: an edit, else any run that is not a check
            writers = [k for k, part in enumerate(parts) if part.action == "edit" or k not in checks]
            last_edit = (index, writers[-1] if writers else -1)
    return last_check > last_edit


def _results(environments: list[Any]) -> list[Any]:
    out = []
    for environment in environments:
        try:
            out.append(environment.result)
        except Exception:  # the environment itself failed (no sandbox): not the agent's doing
            out.append(None)
    return out


def _share(result: Any) -> float:
    steps = result.steps
    if len(steps) > 1 and result.strategy == "final":
        values = list(steps[-1].milestones.values())
    else:
        values = list(result.milestones.values())
    return sum(min(max(v, 0.0), 1.0) for v in values) / len(values) if values else 0.0


def milestone_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """The share of milestones passed, per rollout."""
    return [None if r is None else _share(r) for r in _results(environments)]


def pass_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """1 when every milestone passed, else 0, per rollout."""
    return [None if r is None else float(_share(r) == 1.0) for r in _results(environments)]


def verification_reward(environments: list[Any], **kwargs: Any) -> list[float | None]:
    """1 when the agent ran a check after its last change (module docstring: the exact rule)."""
    return [float(verified_after_last_edit(environment.commands)) for environment in environments]
