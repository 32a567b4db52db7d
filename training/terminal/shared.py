"""What both episode backends share (bubblewrap and namespaces in `episode.py`, Docker in
`docker.py`): the limits, errors and results of an episode, the interface a backend's agent side
offers the episode (`EpisodeAgent`), the record of executed commands, what the judge may be shown of
the agent's files, and how a verifier's logs become a verdict. Apart from both backends, so neither
imports the other."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from curriculab.training.terminal.task import Step, TerminalTask
from curriculab.trajectory.errors import CurriculabError

SHOWN = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
"""Top-level host folders an episode sees (read-only); everything else of the host is absent."""
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SKIPPED_ROOTS = ("tmp", "root", "logs", "tests", "solution")
"""Top-level names the harness mounts itself (a task's files may go under /tmp and /root)."""


class EpisodeError(CurriculabError, RuntimeError):
    """The episode could not be set up or run as the task asks (the message says why)."""


class NeedsImage(EpisodeError):
    """The task cannot run on this backend without its image; the message says what is missing."""


class MarkerBroken(EpisodeError):
    """The agent's shell broke or imitated the harness's end-of-command marker (one carrying no
    status, one of an earlier command's again, or none while the shell lived on past the interrupt).
    Inside a shell the agent controls the marker can always be imitated, so this is the agent's
    doing, never the environment's failure: the episode ends and scores 0 with the reason
    (`EpisodeResult.forfeited`), and the statuses the shell reported never pay."""


@dataclass(frozen=True)
class EpisodeLimits:
    """Bounds of one episode (agent and verifier each)."""

    command_timeout_s: float = 30.0
    """Wall-clock seconds one agent command may take before it is killed (exit code 124)."""
    output_bytes: int = 16 * 1024
    """Output of one command kept (first half and last half); the rest is dropped with a marker."""
    memory_bytes: int = 1 << 30
    """Memory of the whole sandbox (a cgroup where writable; else address space per process)."""
    processes: int = 128
    """Processes at once (cgroup pids.max and RLIMIT_NPROC of the sandbox's own uid)."""
    disk_bytes: int = 256 << 20
    """Size of everything the agent may write (a tmpfs, when run as root; else per-file only)."""
    inodes: int = 65_536
    """Files, folders and links the agent's folders may hold (each costs the host kernel memory that
    no byte cap counts): `nr_inodes` of the episode's tmpfs when run as root, and of every Docker tmpfs."""
    file_bytes: int = 64 << 20
    """Largest file any process may write (RLIMIT_FSIZE)."""
    open_files: int = 512
    """Open file descriptors per process."""
    cpu_s: int = 600
    """CPU seconds per process."""
    verifier_timeout_s: float = 120.0
    """Most seconds the verifier may take (the task's `[verifier] timeout_sec` when lower)."""
    setup_timeout_s: float = 60.0
    """Seconds for the Dockerfile's replayed RUN commands, together."""
    judged_entries: int = 20_000
    """Files, folders and links of the agent's the judge copies (past it the verdict is 0, said why);
    also the most an observing episode follows after each command."""
    judged_depth: int = 64
    """Deepest folder nesting the judge copies (past it the verdict is 0, said why)."""

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if value <= 0:
                raise ValueError(f"EpisodeLimits.{name} is {value}; it must be positive")


@dataclass
class CommandResult:
    """What one command in the agent's shell did."""

    command: str
    """As the agent sent it."""
    output: str
    """stdout and stderr together, as a terminal shows them (capped)."""
    exit_code: int
    """Its exit status (124 when it timed out; the shell's own status when it exited)."""
    seconds: float
    """Wall-clock time it took."""
    timed_out: bool = False
    """Killed at `command_timeout_s`."""
    dropped_bytes: int = 0
    """Output dropped by the cap."""
    shell_exited: bool = False
    """The command ended the shell (`exit`); the next command starts a new one at the workdir."""
    changed: list[str] = field(default_factory=list)
    """Files it created, modified or removed in the task's folders and /root (an `observe` episode's)."""
    step: int = 0
    """The task step it ran in (0 for a single-step task)."""
    started_at: float | None = None
    """When it was sent (seconds since the epoch)."""
    unobserved: str | None = None
    """Why `changed` could not be told (the agent's folders held too many entries to walk)."""
    executed: list[tuple[str, int | None]] | None = None
    """The simple commands the shell executed for it, in order, each with its exit status (an
    observing episode's, from bash's DEBUG trap): `true || pytest` executed `true` alone. Empty when
    the record was tampered with or cut short (`ran_note` says so); None when not recorded."""
    ran_note: str | None = None
    """Why `executed` is empty or partial."""


@dataclass(frozen=True)
class CheckRun:
    """The agent's last test-runner check after its last change, replayed by the harness on the
    judge's copy of its files in the sandbox its programs run in (`sibling`): a clean shell (no
    function, alias or shim of the agent's; PATH the system folders), so the runner is the
    system's, and its status and output are the harness's to read, not the agent's shell's."""

    argv: tuple[str, ...]
    """What ran (the check's words as the agent's shell executed them)."""
    runner: str
    """The system test runner (`shell.test_runner`): pytest, unittest, doctest, make, …"""
    exit_code: int | None
    """Its status (None: timed out, or it could not start)."""
    tests_ran: bool
    """Whether it reported tests run, passing or failing (`shell.reported_tests`)."""
    output: str = ""
    """Its stdout and stderr (the last 4 KiB)."""


@dataclass
class StepVerdict:
    """The verifier's judgement of one step."""

    step: str
    """The step's name (`main` for a single-step task)."""
    rewards: dict[str, float]
    """What the verifier wrote: reward.json's named numbers, or reward.txt as `{"reward": x}`."""
    output: str
    """The verifier's stdout and stderr (capped)."""
    seconds: float
    """How long it ran."""
    error: str | None = None
    """Why no reward could be read (no file, unparsable, timed out, killed); rewards are then empty."""
    exit_code: int | None = None
    """test.sh's exit status (128 + N when signal N killed it)."""
    refused: str | None = None
    """Why the verdict is 0 whatever the verifier wrote: test.sh exited non-zero, or what the agent
    left could not be judged (too many entries, too deep, too large). Not an error: the agent's
    doing, scored as a failure."""
    check_run: CheckRun | None = None
    """The harness's replay of the agent's last test-runner check (the last step's verdict only)."""

    @property
    def milestones(self) -> dict[str, float]:
        """One value per milestone: reward.json's keys other than `reward`, else the reward itself."""
        named = {k: v for k, v in self.rewards.items() if k != "reward"}
        return named or ({"reward": self.rewards["reward"]} if "reward" in self.rewards else {})

    @property
    def reward(self) -> float:
        """The `reward` key, else the mean of the milestones (0 without a verdict)."""
        if "reward" in self.rewards:
            return self.rewards["reward"]
        values = list(self.milestones.values())
        return sum(values) / len(values) if values else 0.0


@dataclass
class EpisodeResult:
    """The whole attempt, as Harbor would score the trial."""

    task_id: str
    """The task."""
    steps: list[StepVerdict]
    """One verdict per step run."""
    strategy: str
    """How steps combine: mean (per key, missing keys 0) or final."""
    commands: list[CommandResult] = field(default_factory=list)
    """Everything the agent ran, in order."""
    failure: str | None = None
    """Why the environment failed (the harness's fault, never the agent's: the sandbox did not
    start, a command or the judge broke); its rewards are then None, not 0."""
    forfeited: str | None = None
    """Why the agent's own doing ended the episode (`MarkerBroken`): every step not yet judged is
    refused (0, this reason) without running the verifier, and every reward is 0, never None."""

    @property
    def rewards(self) -> dict[str, float]:
        if not self.steps:
            return {}
        if self.strategy == "final" or len(self.steps) == 1:
            return dict(self.steps[-1].rewards)
        keys = sorted({k for step in self.steps for k in step.rewards})
        return {k: sum(step.rewards.get(k, 0.0) for step in self.steps) / len(self.steps) for k in keys}

    @property
    def milestones(self) -> dict[str, float]:
        """Per milestone: a multi-step task's steps (each step's reward), else the verifier's named rewards."""
        if len(self.steps) > 1:
            return {step.step: step.reward for step in self.steps}
        return self.steps[0].milestones if self.steps else {}

    @property
    def reward(self) -> float:
        """One number: the trial's `reward` key, else the mean over milestones."""
        rewards = self.rewards
        if "reward" in rewards:
            return rewards["reward"]
        values = list(self.milestones.values())
        return sum(values) / len(values) if values else 0.0

    @property
    def error(self) -> str | None:
        return next((f"{s.step}: {s.error}" for s in self.steps if s.error), None)

    @property
    def tests_ran(self) -> bool:
        """Whether the harness's replay of the agent's last check after its last change ran tests
        (`CheckRun`): what `verification_reward` pays for, beside the shell's record."""
        run = self.steps[-1].check_run if self.steps else None
        return run is not None and run.tests_ran


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def link_allowed(link: str, target: str, is_link: Callable[[str], str | None], roots: Sequence[str]) -> bool:
    """Whether a link at `link` (an absolute path in the episode) to `target` resolves, as the kernel
    would resolve it in the judge, inside the agent's folders `roots` or the read-only system
    folders (`SHOWN`): never through /tests, /solution, /logs, /proc, /dev or anywhere else.
    `is_link(path)` answers a path's link target in the episode (None: not a link)."""
    pending = _split(target) if target.startswith("/") else [*_split(link)[:-1], *_split(target)]
    resolved: list[str] = []
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            resolved = resolved[:-1]
            continue
        resolved.append(part)
        if resolved[0] not in roots and resolved[0] not in SHOWN:
            return False
        inner = is_link("/" + "/".join(resolved))
        if inner is not None:
            hops += 1
            if hops > 40:  # the kernel's own limit: ELOOP
                return False
            resolved.pop()
            if inner.startswith("/"):
                resolved = []
            pending = _split(inner) + pending
    return bool(resolved)


PATH_BYTES = 3072
"""Longest path of the agent's the judge copies: the host's limit (4,096) less the harness's folders."""


class JudgedCopy:
    """What the agent left, counted as it is copied for the judge: regular files, folders and links
    `link_allowed` accepts; FIFOs, sockets, devices and other links are dropped. Past a bound of
    `EpisodeLimits` (entries, depth, bytes) `refused` says why and the copy stops there."""

    def __init__(self, limits: EpisodeLimits, roots: Sequence[str]):
        self.limits, self.roots = limits, roots
        self.entries = self.bytes = 0
        self.refused: str | None = None

    def admit(self, path: str, depth: int) -> bool:
        """Count one entry; False (and `refused` set) past a bound."""
        self.entries += 1
        limits = self.limits
        if len(os.fsencode(path)) > PATH_BYTES:
            self.refused = f"the agent left a path longer than {PATH_BYTES:,} bytes"
        elif self.entries > limits.judged_entries:
            self.refused = f"the agent left more than {limits.judged_entries:,} files and folders"
        elif depth > limits.judged_depth:
            self.refused = f"the agent left folders nested more than {limits.judged_depth} deep"
        return self.refused is None

    def grow(self, size: int) -> bool:
        """Count a file's bytes; False (and `refused` set) past the agent's disk."""
        self.bytes += size
        if self.bytes > self.limits.disk_bytes:
            self.refused = f"the agent left more than {self.limits.disk_bytes >> 20} MiB of files"
        return self.refused is None

    def copy(self, fs: Path, target: Path, owner: int) -> str | None:
        """Copy the agent's `roots` from the episode's root `fs` to `target` (given to `owner`);
        the reason it stopped, or None. Work is bounded by the bounds, whatever the agent made."""

        def is_link(path: str) -> str | None:
            top = path.strip("/").split("/")[0]
            here = fs / path.lstrip("/") if top in self.roots else Path(path)
            try:
                return os.readlink(here)
            except OSError:
                return None

        stack = [(f"/{name}", 0) for name in self.roots]
        while stack:
            path, depth = stack.pop()
            if not self.admit(path, depth):
                return self.refused
            here, there = fs / path.lstrip("/"), target / path.lstrip("/")
            try:
                info = os.lstat(here)
            except OSError:  # gone or unreadable: the judge does not see it
                continue
            if stat.S_ISREG(info.st_mode) and not self.grow(info.st_size):
                return self.refused
            try:
                if stat.S_ISLNK(info.st_mode):
                    pointed = os.readlink(here)
                    if not link_allowed(path, pointed, is_link, self.roots):
                        continue
                    os.symlink(pointed, there)
                elif stat.S_ISDIR(info.st_mode):
                    there.mkdir(exist_ok=True)
                    os.chmod(there, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
                    with os.scandir(here) as listing:  # read lazily: stop once the entries are past the bound
                        for entry in listing:
                            stack.append((f"{path}/{entry.name}", depth + 1))
                            if self.entries + len(stack) > self.limits.judged_entries:
                                self.refused = (
                                    f"the agent left more than {self.limits.judged_entries:,} files and folders"
                                )
                                return self.refused
                elif stat.S_ISREG(info.st_mode):
                    shutil.copy2(here, there)
                else:  # a FIFO, socket or device: never the judge's
                    continue
            except PermissionError:  # a folder or file the agent made unreadable (harness not root)
                continue
            if os.geteuid() == 0:
                os.lchown(there, owner, owner)
        return None


RAN_FILE = "/logs/.curriculab-ran"
"""Where the episode shell's DEBUG trap records each simple command it executes (NUL-ended
`status<TAB>command` records, the status being the previous command's); the harness reads and
removes it after each command."""
RECORD_TRAP = f'trap \'printf "%s\\t%s\\0" "$?" "$BASH_COMMAND" >> {RAN_FILE} 2>/dev/null || :\' DEBUG; set -T; '
"""Armed before every command: functions, subshells, pipelines and command substitutions inherit it
(`set -T`). A program started by the command (`bash -c`, a script, `make`) is seen as itself only."""
RAN_BYTES = 1 << 20
"""Most of the record read after a command (its end: the closing record must be there)."""
RAN_RECORDS = 1000
"""Most executed commands kept per command (the last ones: a check after the edit is what counts)."""


def executed_commands(
    record: bytes | None, nonce: str, command: str
) -> tuple[list[tuple[str, int | None]], str | None]:
    """The simple commands the agent's `command` executed, with their statuses, from the trap's
    `record`: those after the `: <nonce>` marker and before the harness's closing `printf` (which
    proves the trap stayed armed to the end), less the harness's own sourcing. Empty with the
    reason when that closing record is missing (the trap removed, the record deleted, the shell gone)."""
    entries = []
    for raw in (record or b"").split(b"\0"):
        status, tab, text = raw.partition(b"\t")
        if tab:
            entries.append((text.decode("utf-8", errors="replace"), int(status) if status.isdigit() else None))
    closing = [i for i, (text, _) in enumerate(entries) if text.startswith("printf") and nonce in text]
    if not closing:
        return [], "no complete record of what ran (the trap was removed, the record deleted or the shell ended)"
    end = closing[-1]
    marks = [i for i, (text, _) in enumerate(entries[:end]) if text == f": {nonce}"]
    start = marks[-1] + 1 if marks else 0
    harness = {f"printf '%s' {shlex.quote(command)}"}
    kept = [
        i
        for i in range(start, end)
        if entries[i][0] not in harness and not entries[i][0].startswith(". <(printf '%s' ")
    ]
    # a command's status is what the next record saw in $? (the sourcing's subshell aside)
    following = [*kept[1:], end]
    ran = [(entries[i][0], entries[j][1]) for i, j in zip(kept, following)]
    note = None if marks else "the record of what ran was too long: its start was dropped"
    if len(ran) > RAN_RECORDS:
        ran, note = ran[-RAN_RECORDS:], f"{len(ran):,} commands ran: the last {RAN_RECORDS:,} are kept"
    return ran, note


def display_path(path: str) -> str:
    """A path as text that any JSON writer takes: bytes that are not UTF-8 written as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def capped(data: bytes, limit: int) -> tuple[str, int]:
    """The output as text, at most `limit` bytes kept (its start and end), and how many were dropped."""
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace"), 0
    half = limit // 2
    dropped = len(data) - 2 * half
    marker = f"\n[... {dropped} bytes of output dropped ...]\n".encode()
    return (data[:half] + marker + data[-half:]).decode("utf-8", errors="replace"), dropped


def parse_rewards(logs: Path) -> dict[str, float]:
    """Read `reward.json` or `reward.txt` as Harbor does; ValueError says what is wrong. Where both
    were written they must agree (reward.txt is reward.json's `reward`, or the mean of its numbers):
    a program the verifier ran may have written one of them before the verifier wrote the other."""
    as_json, as_text = logs / "reward.json", logs / "reward.txt"
    named = _json_rewards(as_json) if as_json.is_file() and not as_json.is_symlink() else None
    number = _text_reward(as_text) if as_text.is_file() and not as_text.is_symlink() else None
    if named is not None and number is not None:
        overall = named.get("reward", sum(named.values()) / len(named) if named else math.nan)
        if not math.isclose(overall, number, abs_tol=1e-9):
            raise ValueError(
                f"reward.json ({overall:g}) and reward.txt ({number:g}) disagree: the verdict is not trusted"
            )
    if named is not None:
        return named
    if number is not None:
        return {"reward": number}
    raise ValueError("the verifier wrote no /logs/verifier/reward.txt or reward.json")


def _json_rewards(path: Path) -> dict[str, float]:
    text = path.read_text(errors="replace")
    if not text.strip():
        raise ValueError("reward.json is empty")
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError("reward.json is not JSON") from None
    values = value if isinstance(value, dict) else {"reward": value}
    rewards = {}
    for key, number in values.items():
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            raise ValueError(f"reward.json: {key} is {number!r}, not a finite number")
        rewards[str(key)] = float(number)
    return rewards


def _text_reward(path: Path) -> float:
    text = path.read_text(errors="replace").strip()
    if not text:
        raise ValueError("reward.txt is empty")
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"reward.txt holds {text[:40]!r}, not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"reward.txt holds {number}, not a finite number")
    return number


def writable_roots(task: TerminalTask) -> list[str]:
    """The top-level folders the task's files and workdir live in (each a writable folder of the
    episode); a file meant for a folder the host shows read-only means the task needs its image."""
    if task.image.unsupported:
        raise NeedsImage("needs its image: " + "; ".join(task.image.unsupported))
    roots: list[str] = []
    for path in [task.workdir, *(p.target for p in task.image.placements)]:
        top = path.strip("/").split("/")[0]
        if not top:
            raise NeedsImage(f"needs its image: it writes into / itself ({path})")
        if top in SHOWN or top in ("proc", "dev", "sys"):
            raise NeedsImage(
                f"needs its image: it places files in /{top} ({path}), which this backend shows read-only from the host"
            )
        if top not in SKIPPED_ROOTS and top not in roots:
            roots.append(top)
    return roots


def agent_env(task: TerminalTask) -> dict[str, str]:
    """The agent shell's environment: a plain terminal's, and the Dockerfile's ENV."""
    return {"PATH": SYSTEM_PATH, "HOME": "/root", "TERM": "dumb", "LANG": "C.UTF-8", "PS1": "", **task.image.env}


def verifier_env(step: Step) -> dict[str, str]:
    """The judge's clean environment: nothing the agent set or planted, the step's `[verifier.env]`."""
    return {
        "PATH": SYSTEM_PATH,
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "TEST_DIR": "/tests",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_ADDOPTS": "-p no:cacheprovider --confcutdir=/tests",
        **step.verifier_env,
    }


def verdict(
    step: Step, output: bytes, exit_code: int | None, seconds: float, logs: Path | None, error: str | None
) -> StepVerdict:
    """The step's verdict from what the judge did: its reward files, unless it timed out or was
    killed; a test.sh that exited non-zero caps every number at 0, and the keys must be the step's
    milestones (`check_milestones`)."""
    rewards: dict[str, float] = {}
    refused = None
    if error is None and exit_code is not None and exit_code >= 128:
        # a program the tests ran (the agent's) may have written a reward and killed them
        error = f"test.sh was killed by signal {exit_code - 128}: its reward is not trusted"
    if error is None and logs is not None:
        try:
            rewards = parse_rewards(logs)
            check_milestones(step, rewards)
        except ValueError as exc:
            rewards, error = {}, str(exc)
    if error is None and exit_code:
        # the verifier failed (or a program it ran made it fail after forging the reward): at most 0
        refused = f"test.sh exited {exit_code}: its reward is capped at 0"
        rewards = {key: min(value, 0.0) for key, value in rewards.items()}
    text, _ = capped(output, 64 * 1024)
    return StepVerdict(step.name, rewards, text, seconds, error, exit_code, refused)


def refused_verdict(step: Step, reason: str) -> StepVerdict:
    """0 on each of the step's milestones, without running the verifier: what the agent left cannot be judged."""
    zeros = dict.fromkeys(step.milestones or ["reward"], 0.0)
    return StepVerdict(step.name, zeros, "", 0.0, None, None, reason)


def check_milestones(step: Step, rewards: dict[str, float]) -> None:
    """ValueError unless `rewards` holds the step's milestones: the names it declares, exactly, or
    as many named numbers as it declares (a bare `reward` stands for one milestone only)."""
    named = sorted(key for key in rewards if key != "reward")
    if step.milestones is not None:
        if sorted(rewards) != sorted(step.milestones):
            raise ValueError(
                f"reward.json holds {sorted(rewards)}, not the milestones the task declares {sorted(step.milestones)}"
            )
    elif step.milestone_count is not None and step.milestone_count > 1 and len(named) != step.milestone_count:
        raise ValueError(
            f"the verifier wrote {len(named)} named milestones ({', '.join(named) or 'a bare reward'}), "
            f"but the task declares {step.milestone_count}"
        )


class EpisodeAgent(Protocol):
    """The agent's side of an episode on one backend: a shell to drive, what it changed, the judge.
    `Episode` holds one and calls only these."""

    backend: str
    """bwrap, namespaces or docker."""
    command_prefix: str
    """Shell text every command is sent behind (the backend's own setup of it)."""

    @property
    def replays_setup(self) -> bool:
        """Whether the episode replays the Dockerfile's RUN lines in the shell (no task image here)."""
        ...

    def start_shell(self) -> None: ...
    def shell_started(self) -> None: ...
    def alive(self) -> bool: ...
    def write(self, data: bytes) -> bool: ...
    def read(self, timeout: float) -> bytes | None: ...
    def exit_code(self) -> int: ...
    def before_command(self) -> frozenset[int]: ...
    def interrupt(self, before: frozenset[int]) -> None: ...
    def end_shell(self) -> None: ...
    def files(self) -> tuple[dict[str, tuple[int, int]], bool]: ...
    def after_command(self) -> tuple[bytes | None, dict[str, tuple[int, int]], bool]: ...
    def stage_solution(self, source: Path | None) -> None: ...
    def judge(self, step: Step, replay: Sequence[str] | None = None) -> StepVerdict: ...
    def close(self) -> None: ...
