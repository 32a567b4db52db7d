"""Process codes decided from what a terminal episode's environment observed (taxonomy v6): every
command the agent ran, its exit code and output, and the files each command changed, seen from
outside the agent's reach. Exact by construction for the facts they name
(`code_reliability.method = environment`), so the planner may act on them without labels, like
the verifier's codes; the rules coder codes the same trajectories from their logged steps, and
the two are compared per code (`analysis.coding.coder_agreement`).

- `skipped_verification`: the agent changed a file and ran no check after its last change. Not
  applicable when it changed nothing. Since v5 a check counts only if the shell executed it (the
  episode's record of executed commands: `true || pytest` checks nothing, `if pytest; then …`
  does); a command whose record is missing or was tampered with credits no check. Since issue 67
  that record, written by the agent's own shell, only names checks: in an episode the harness
  judged (`Replay` recorded), a test runner counts only when the harness's replay of it reported
  tests run (what `verification_reward` pays for); a check no harness can confirm (a run of a
  program or script, a read of what changed) leaves the code undecided (not applicable, the rules
  coder decides it from the steps); a runner that reported no tests, a shim, a function or a link
  named like one, credits nothing. Where no replay was recorded (an episode stored before), the
  record is all there is: a test runner in it counts only if its own status and output report tests
  run (`shell.reported_tests`: pytest's exit 5, `Ran 0 tests`, a missing module are no check).
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
from curriculab.trajectory.shell import NEVER_WRITES, names_changed, read_commands, reported_tests, test_runner
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
    """Whether the agent's shell's record shows a check (`shell.is_check`) after the last change, over
    an observing episode's commands (`CommandResult`s, in order). `inspection`: a read of a changed
    file (`cat out.txt`) counts too, as the taxonomy's definition has it; the reward
    (`verification_reward`) leaves it out, since a `cat` costs nothing and proves nothing ran. The
    record names checks; what credits one is `code_episode`'s (a `Replay`, else `shell.reported_tests`)."""
    return bool(checks_after_last_edit(commands, inspection))


def checks_after_last_edit(commands: Sequence[Any], inspection: bool = False) -> list[list[str]]:
    """The words of every check the record shows after the last change (`verified_after_last_edit`),
    in order; empty when none did (or nothing changed)."""
    return [list(check.words) for check in _checks_after_last_edit(commands, inspection)]


@dataclass(frozen=True)
class _Check:
    words: tuple[str, ...]
    status: int | None
    """The part's status in the record."""
    output: str
    """Its command line's output (the record keeps one per command)."""


def _checks_after_last_edit(commands: Sequence[Any], inspection: bool) -> list[_Check]:
    edited: set[str] = set()
    for command in commands:
        edited.update(p for p in command.changed if not INCIDENTAL.search(p))
    if not edited:
        return []
    last_edit = (-1, -1)
    found: list[tuple[tuple[int, int], _Check]] = []
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
        output = getattr(command, "output", "") or ""
        found += [((index, k), _Check(tuple(_words(parts[k].command or "")), statuses[k], output)) for k in checks]
        if any(not INCIDENTAL.search(p) for p in command.changed):
            # the change happened at the last part that can write: an edit, else any run that is not a check
            writers = [
                k
                for k, part in enumerate(parts)
                if part.action == "edit"
                or (part.action != "read" and k not in checks and _head(part.command or "") not in NEVER_WRITES)
            ]
            last_edit = (index, writers[-1] if writers else -1)
    return [check for at, check in found if at > last_edit]


def _runner_named(words: Sequence[str]) -> str | None:
    """The test runner a check names wherever its program lives (`./venv/bin/pytest`, a shim at
    `/tmp/bin/pytest` too): `shell.test_runner` of its words with the program's folder dropped."""
    return test_runner([words[0].rsplit("/", 1)[-1], *words[1:]]) if words else None


@dataclass(frozen=True)
class Replay:
    """What the harness itself saw of an episode's checks, for an episode it ran and judged
    (`training.terminal.shared.CheckRun`, stored with the episode's last command as
    `raw.observed.check_run`): its replay of the agent's last test-runner check after the last
    change, in a clean shell (the system's PATH, nothing of the agent's shell), its status and
    output read by the harness. All defaults: the record named no runner to replay, or the episode
    was refused before any replay: no runner check is credited."""

    argv: tuple[str, ...] = ()
    """The check replayed (empty: none)."""
    runner: str | None = None
    """The system test runner it ran (`shell.test_runner`)."""
    exit_code: int | None = None
    """Its status in the replay (None: timed out or could not start)."""
    tests_ran: bool = False
    """Whether it reported tests run, passing or failing (`shell.reported_tests`)."""

    @classmethod
    def from_record(cls, record: dict[str, Any] | None) -> Replay:
        """From the stored `check_run` (None: JSON null, nothing replayed)."""
        if record is None:
            return cls()
        return cls(
            tuple(str(w) for w in record.get("argv") or ()),
            record.get("runner"),
            record.get("exit_code"),
            record.get("tests_ran") is True,
        )


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


def _skipped_verification(commands: Sequence[Any], edits: list[int], replay: Replay | None) -> Finding:
    """`skipped_verification` where the agent changed something: credited by the harness's replay
    where one was recorded, else by the record with `shell.reported_tests` (module docstring)."""
    code = "skipped_verification"
    checks = _checks_after_last_edit(commands, inspection=True)
    last = commands[edits[-1]].command.splitlines()
    where = f"its last change (command {edits[-1] + 1} of {len(commands)}: {(last[0] if last else '')[:80]!r})"
    if replay is None:  # the agent's shell's record is all there is
        credited = [
            c
            for c in checks
            if (runner := _runner_named(c.words)) is None or reported_tests(runner, c.status, c.output)
        ]
        if credited:
            return Finding(code, "absent", "ran a check or inspected what it changed after its last change")
        if checks:
            shown = " ".join(checks[-1].words)[:80]
            return Finding(
                code, "present", f"no test runner after {where} reported tests run (last {shown!r})", [edits[-1]]
            )
        return Finding(code, "present", f"no check after {where}", [edits[-1]])
    if replay.tests_ran:
        shown = " ".join(replay.argv)[:80]
        return Finding(code, "absent", f"the harness's replay of {shown!r} after its last change reported tests run")
    unconfirmed = [c for c in checks if _runner_named(c.words) is None]
    if unconfirmed:
        shown = " ".join(unconfirmed[-1].words)[:80]
        return Finding(
            code,
            "not_applicable",
            f"after its last change only checks no harness can confirm (last {shown!r}: a run of a program or a "
            "read, known from the agent's shell's record alone); the rules coder decides it",
        )
    if replay.argv:
        shown = " ".join(replay.argv)[:80]
        return Finding(
            code,
            "present",
            f"the harness's replay of {shown!r} reported no tests run (exit {replay.exit_code}) after {where}",
            [edits[-1]],
        )
    if checks:  # a runner's name at a path outside the system folders: a program of the agent's
        return Finding(code, "present", f"no check the harness could replay after {where}", [edits[-1]])
    return Finding(code, "present", f"no check after {where}", [edits[-1]])


def code_episode(commands: Sequence[Any], passed_all: bool | None, replay: Replay | None = None) -> dict[str, Finding]:
    """Each of `CODES` for one episode: `commands` in order (`Observed` or the episode's own
    `CommandResult`s), `passed_all` whether every milestone passed (None: no verdict), `replay` what
    the harness saw of its checks (None: not recorded, the record alone decides)."""
    found: dict[str, Finding] = {}
    edits = _edits(commands)
    if not edits:
        found["skipped_verification"] = Finding("skipped_verification", "not_applicable", "changed no file")
    else:
        found["skipped_verification"] = _skipped_verification(commands, edits, replay)
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
