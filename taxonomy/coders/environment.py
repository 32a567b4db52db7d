"""Process codes decided from what a terminal episode's environment observed (taxonomy v6): every
command the agent ran, its exit code and output, and the files each command changed, seen from
outside the agent's reach. Exact by construction for the facts they name
(`code_reliability.method = environment`), so the planner may act on them without labels, like
the verifier's codes; the rules coder codes the same trajectories from their logged steps, and
the two are compared per code (`analysis.coding.coder_agreement`).

- `skipped_verification`: the agent changed a file and ran no check after its last change (the
  rubric of `verified_after_last_edit`, the same one `verification_reward` pays for). Not
  applicable when it changed nothing. Since v5 a check counts only if the shell executed it (the
  episode's record of executed commands: `true || pytest` checks nothing, `if pytest; then …`
  does); a command whose record is missing or was tampered with credits no check.
- `premature_stop`: the verifier found milestones unmet and the agent changed no file at all (it
  looked around and stopped). Not applicable when the agent's time ran out (not a choice to stop).
- `no_plan_revision`: a command failed and the agent ran the same command again, with nothing
  changed in between, and it failed again (a search that found nothing, exit 1 of grep or diff,
  is not a failure).
- `redundant_rework`: the same command run again with nothing changed in between, and it printed
  the same complete output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from curriculab.trajectory.actions import normalise_shell
from curriculab.trajectory.shell import INCIDENTAL as _INCIDENTAL
from curriculab.trajectory.shell import NEVER_WRITES, names_changed, read_commands
from curriculab.trajectory.shell import is_check as _is_check

CODER = "environment"
"""The coder name in `failure_codes`, `coding_status` and `code_reliability`."""
TAXONOMY_VERSION = "v6"
"""The taxonomy whose definitions these rules decide."""
OBSERVING_AGENTS: tuple[str, ...] = ("curriculab-terminal",)
"""Agents whose every trial is an episode of curriculab's terminal environment (its observations in the steps)."""
CODES: tuple[str, ...] = ("skipped_verification", "premature_stop", "no_plan_revision", "redundant_rework")
"""The codes an episode's observations decide."""

INCIDENTAL = _INCIDENTAL
"""Files a check writes as a side effect: never an edit (`shell.INCIDENTAL`)."""


def _words(text: str) -> list[str]:
    """The words of a command's first simple command, wrappers stripped (`shell.read_commands`)."""
    commands = read_commands(text)
    return list(commands[0].argv) if commands else []


def _head(part: str) -> str:
    words = _words(part)
    return words[0].rsplit("/", 1)[-1] if words else ""


def is_check(part: str, edited: set[str]) -> bool:
    """Whether one shell command (a part of a command line) runs a check, as the rubric counts it
    (`shell.is_check`)."""
    return _is_check(_words(part), edited)


def _parts(command: Any) -> tuple[list[Any], list[int | None]]:
    """A command's parts in the order they ran, and each one's exit status: what the shell executed
    where the episode recorded it (`executed`), else its text read in order (each with the line's status)."""
    executed = getattr(command, "executed", None)
    if executed is None:
        parts = normalise_shell(command.command)
        return parts, [command.exit_code] * len(parts)
    parts, statuses = [], []
    for text, status in executed:
        for part in normalise_shell(text):
            parts.append(part)
            statuses.append(status)
    return parts, statuses


def verified_after_last_edit(commands: Sequence[Any], inspection: bool = False) -> bool:
    """The rubric itself, over an observing episode's commands (`CommandResult`s, in order): a check
    (`shell.is_check`) ran after the last change. `inspection`: a read of a changed file (`cat out.txt`)
    counts too, as the taxonomy's definition has it; the reward (`verification_reward`) leaves it out,
    since a `cat` costs nothing and proves nothing ran."""
    return bool(checks_after_last_edit(commands, inspection))


def checks_after_last_edit(commands: Sequence[Any], inspection: bool = False) -> list[list[str]]:
    """The words of every check that ran after the last change (`verified_after_last_edit`), in order;
    empty when none did (or nothing changed)."""
    edited: set[str] = set()
    for command in commands:
        edited.update(p for p in command.changed if not INCIDENTAL.search(p))
    if not edited:
        return []
    last_edit = (-1, -1)
    found: list[tuple[tuple[int, int], list[str]]] = []
    for index, command in enumerate(commands):
        parts, statuses = _parts(command)
        checks = [
            k
            for k, part in enumerate(parts)
            if statuses[k] not in (126, 127)  # it could run: a check the shell could not find checks nothing
            and (
                is_check(part.command or "", edited)
                or (
                    inspection  # a read that showed a changed file (one that failed showed nothing)
                    and part.action == "read"
                    and statuses[k] == 0
                    and bool(part.path)
                    and names_changed(part.path, edited)
                )
            )
        ]
        found += [((index, k), _words(parts[k].command or "")) for k in checks]
        if any(not INCIDENTAL.search(p) for p in command.changed):
            # the change happened at the last part that can write: an edit, else any run that is not a check
            writers = [
                k
                for k, part in enumerate(parts)
                if part.action == "edit"
                or (part.action != "read" and k not in checks and _head(part.command or "") not in NEVER_WRITES)
            ]
            last_edit = (index, writers[-1] if writers else -1)
    return [words for at, words in found if at > last_edit]


@dataclass(frozen=True)
class Observed:
    """One command as the environment saw it."""

    command: str
    """The command line the agent sent."""
    exit_code: int | None
    """Its exit code."""
    output: str = ""
    """What it printed (as the agent saw it)."""
    changed: tuple[str, ...] = ()
    """Files it changed (created, modified or removed), seen from outside the sandbox."""
    timed_out: bool = False
    """Whether the environment interrupted it (the command's or the agent's time ran out)."""
    truncated: bool = False
    """Whether its output was cut."""
    executed: tuple[tuple[str, int | None], ...] | None = None
    """The simple commands the shell executed for it, with their statuses (curriculab's episodes
    record them); None where not recorded: the command line is then read as text."""


@dataclass
class Finding:
    """One code for one episode: present, absent or not applicable, with why and where."""

    code: str
    """The code."""
    status: str
    """present, absent or not_applicable."""
    rationale: str = ""
    """One line: what decided it."""
    evidence: list[int] = field(default_factory=list)
    """Indices of the commands that show it."""


_SEARCHES = {"grep", "egrep", "fgrep", "rg", "diff", "cmp", "test", "["}


def _edits(commands: Sequence[Any]) -> list[int]:
    return [i for i, c in enumerate(commands) if any(not INCIDENTAL.search(p) for p in c.changed)]


def _failed(command: Any) -> bool:
    if command.exit_code in (0, None):
        return False
    return not (command.exit_code == 1 and _head(command.command) in _SEARCHES)


def _repeats(commands: Sequence[Any], same_result: Callable[[Any, Any], bool]) -> list[tuple[int, int]]:
    """Pairs (earlier, later) of one command line run twice with no change in between whose
    results `same_result` says repeat."""
    found: list[tuple[int, int]] = []
    last_seen: dict[str, int] = {}
    for index, command in enumerate(commands):
        key = " ".join(command.command.split())
        earlier = last_seen.get(key)
        if earlier is not None and not _edits(commands[earlier:index]) and same_result(commands[earlier], command):
            found.append((earlier, index))
        last_seen[key] = index
    return found


def code_episode(commands: Sequence[Any], passed_all: bool | None) -> dict[str, Finding]:
    """Each of `CODES` for one episode: `commands` in order (`Observed` or the episode's own
    `CommandResult`s), `passed_all` whether every milestone passed (None: no verdict)."""
    found: dict[str, Finding] = {}
    edits = _edits(commands)
    if not edits:
        found["skipped_verification"] = Finding("skipped_verification", "not_applicable", "changed no file")
    elif verified_after_last_edit(commands, inspection=True):
        found["skipped_verification"] = Finding(
            "skipped_verification", "absent", "ran a check or inspected what it changed after its last change"
        )
    else:
        found["skipped_verification"] = Finding(
            "skipped_verification",
            "present",
            f"no check after its last change (command {edits[-1] + 1} of {len(commands)}: "
            f"{commands[edits[-1]].command.splitlines()[0][:80]!r})",
            [edits[-1]],
        )
    if passed_all is None:
        found["premature_stop"] = Finding("premature_stop", "not_applicable", "no verdict")
    elif any(c.timed_out and "agent's time" in c.output for c in commands):
        found["premature_stop"] = Finding("premature_stop", "not_applicable", "its time ran out: not a choice to stop")
    elif not passed_all and not edits:
        found["premature_stop"] = Finding(
            "premature_stop", "present", f"milestones unmet and no file changed in {len(commands)} command(s)"
        )
    else:
        found["premature_stop"] = Finding("premature_stop", "absent", "passed" if passed_all else "changed files")
    retried = _repeats(commands, lambda a, b: _failed(a) and _failed(b))
    found["no_plan_revision"] = (
        Finding(
            "no_plan_revision",
            "present",
            f"command {retried[0][0] + 1} failed (exit {commands[retried[0][0]].exit_code}) and ran again "
            f"unchanged as command {retried[0][1] + 1}, failing again",
            [i for pair in retried for i in pair],
        )
        if retried
        else Finding("no_plan_revision", "absent", "no failing command repeated unchanged")
    )
    reread = _repeats(commands, lambda a, b: not a.truncated and a.output == b.output)
    found["redundant_rework"] = (
        Finding(
            "redundant_rework",
            "present",
            f"command {reread[0][1] + 1} repeats command {reread[0][0] + 1} with nothing changed and the same output",
            [i for pair in reread for i in pair],
        )
        if reread
        else Finding("redundant_rework", "absent", "no command repeated with the same output")
    )
    return found
