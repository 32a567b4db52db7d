"""One attempt at a terminal task: a stateful shell in a sandbox for the agent, then the task's
verifier as a judge in a sandbox of its own.

The agent's shell keeps its working directory, variables and background jobs between commands,
like a terminal; each command has a timeout, an output cap (with a marker) and its exit code. The
agent sees the host's system folders read-only (`SHOWN`, less `hidden_paths()`), the task's files
where its Dockerfile puts them, and its own /tmp, /root and /logs; no network, no other process.

The verifier is not the agent's guest. When the agent's turn ends, every process it started is
killed; the verifier then runs `tests/test.sh` from a pristine copy at /tests, as another uid, over
a copy of the files the agent left, with a clean environment (fixed PATH and HOME, no PYTHONPATH,
no user site, pytest's conftest search cut at /tests), and the harness reads
the reward from the verifier's own /logs/verifier, which the agent never had."""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import secrets
import select
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from curriculab.training.sandbox import processes
from curriculab.training.sandbox.isolation import Cgroup, UidLease, seccomp_program
from curriculab.training.terminal.task import Step, TerminalTask
from curriculab.trajectory.errors import CurriculabError

if TYPE_CHECKING:
    from curriculab.training.terminal.docker import DockerAgent

SHOWN = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
"""Top-level host folders an episode sees (read-only); everything else of the host is absent."""
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SKIPPED_ROOTS = ("tmp", "root", "logs", "tests", "solution")
"""Top-level names the harness mounts itself (a task's files may go under /tmp and /root)."""


class EpisodeError(CurriculabError, RuntimeError):
    """The episode could not be set up or run as the task asks (the message says why)."""


class NeedsImage(EpisodeError):
    """The task cannot run on this backend without its image; the message says what is missing."""


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


@functools.cache
def hidden_paths() -> list[str]:
    """Folders inside `SHOWN` an episode sees empty: this project's installed files (its built-in
    suite carries tests and solutions) and any Python environment holding it."""
    import glob

    patterns = [
        "/usr/lib/python3*/site-packages/curriculab*",
        "/usr/lib/python3/dist-packages/curriculab*",
        "/usr/local/lib/python3*/site-packages/curriculab*",
        "/usr/local/lib/python3*/dist-packages/curriculab*",
        "/usr/local/share/curriculab",
        "/usr/share/curriculab",
    ]
    found = {path for pattern in patterns for path in glob.glob(pattern) if os.path.isdir(path)}
    package = Path(__file__).resolve().parents[2]  # the checkout or site-packages holding curriculab
    if any(package.is_relative_to(f"/{name}") for name in SHOWN):
        found.add(str(package))
    return sorted(found)


@functools.cache
def _shown_args() -> tuple[str, ...]:
    args: list[str] = []
    for name in SHOWN:
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    for path in hidden_paths():
        args += ["--tmpfs", path, "--remount-ro", path]
    return tuple(args)


def _mount_tmpfs(path: Path, size: int) -> bool:
    """Mount a size-capped tmpfs at `path` (root only): the mount(2) call itself, no `mount` process."""
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size},mode=0711".encode()
    return libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", 0, options) == 0


def _unmount(path: Path) -> None:
    ctypes.CDLL(None, use_errno=True).umount2(str(path).encode(), 2)  # MNT_DETACH


class _Box:
    """Host side of one sandbox: a directory (a size-capped tmpfs when root), a uid of its own, a
    cgroup where writable; `end()` kills everything that ran as its uid and removes it all."""

    def __init__(self, limits: EpisodeLimits, prefix: str, disk_bytes: int | None = None, isolation: str = "bwrap"):
        self.limits, self.isolation = limits, isolation
        self.lease = UidLease()
        self.uid = self.lease.uid
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.mounted = os.geteuid() == 0 and _mount_tmpfs(self.root, disk_bytes or limits.disk_bytes)
        os.chmod(self.root, 0o711)
        self.cgroup = Cgroup.create(
            f"curriculab-episode-{os.getpid()}-{secrets.token_hex(4)}", limits.memory_bytes, limits.processes
        )

    def folder(self, relative: str, owner: int | None = None) -> Path:
        path = self.root / relative
        path.mkdir(parents=True, exist_ok=True)
        if owner is not None and os.geteuid() == 0:
            os.chown(path, owner, owner)
        return path

    def start(
        self, binds: list[str], workdir: str, env: dict[str, str], argv: list[str], **popen: object
    ) -> subprocess.Popen:
        """Start `argv` in this sandbox: a `sh` joins the cgroup, sets the rlimits and execs setpriv
        (this box's uid), which execs bubblewrap; bubblewrap reads the seccomp filter from a fresh
        memfd (it reads it to the end, so one per start). Popen's own `user=` would cost a full
        fork of the harness (no vfork), tens of milliseconds in a trainer-sized process. With the
        `namespaces` isolation the same mounts are made by `unshare` and a script (`_unshared`)."""
        seccomp_fd = None
        program = seccomp_program(()) if self.isolation == "bwrap" else None
        if program is not None:
            seccomp_fd = os.memfd_create("episode-seccomp", 0)
            os.write(seccomp_fd, program)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
        limits = self.limits
        # dash's ulimit: -f in 512-byte blocks, -v in KiB, -p processes; one option a call
        ulimits = [f"-t {limits.cpu_s}", f"-f {limits.file_bytes // 512}", f"-n {limits.open_files}", "-c 0"]
        ulimits += [f"-p {limits.processes}"] + ([] if self.cgroup else [f"-v {limits.memory_bytes // 1024}"])
        script = (
            'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; '
            + "; ".join(f"ulimit {u}" for u in ulimits)
            + '; exec "$@"'
        )
        procs = [str(path / "cgroup.procs") for path in self.cgroup.paths] if self.cgroup else []
        mounts = [*_shown_args(), "--proc", "/proc", "--dev", "/dev", *binds, "--remount-ro", "/"]
        if self.isolation == "namespaces":
            unshared = _unshared(mounts, self.root / "newroot", self.uid, workdir, env, argv)
            return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
                ["/bin/sh", "-c", script, "sh", *procs, "--", *unshared], start_new_session=True, **popen
            )
        settings = [arg for key, value in env.items() for arg in ("--setenv", key, value)]
        command = [
            "/bin/sh",
            "-c",
            script,
            "sh",
            *procs,
            "--",
            *(["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"] if os.geteuid() == 0 else []),
            "bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--assert-userns-disabled",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--new-session",
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            *mounts,  # only the folders bound are writable: "/" is remounted read-only last
            "--chdir",
            workdir,
            "--clearenv",
            *settings,
            *argv,
        ]
        try:
            return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
                command,
                start_new_session=True,
                pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
                **popen,
            )
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)

    def kill_all(self) -> None:
        """Kill every process of this sandbox (its uid is leased to it alone) until none is left."""
        for _ in range(50):
            pids = processes.uid_processes(self.uid) if os.geteuid() == 0 else []
            if self.cgroup:
                for path in self.cgroup.paths:
                    try:
                        pids += [int(p) for p in (path / "cgroup.procs").read_text().split()]
                    except (OSError, ValueError):
                        pass
            if not pids:
                return
            processes.kill(*pids)
            time.sleep(0.01)

    def end(self) -> None:
        self.kill_all()
        if self.mounted:
            _unmount(self.root)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.cgroup:
            self.cgroup.remove()
        self.lease.close()


def _system_tool(name: str) -> str:
    """A system program by absolute path (a bare PATH may lack the sbin folders)."""
    found = shutil.which(name) or next(
        (f"{d}/{name}" for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin") if os.path.exists(f"{d}/{name}")), None
    )
    if found is None:
        raise EpisodeError(f"the namespaces isolation needs `{name}` (util-linux / coreutils)")
    return found


_SECCOMP_THEN_EXEC = """
import ctypes, os, sys
program = bytes.fromhex(sys.argv[1])
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(22, 2, ctypes.byref(Program(len(program) // 8, program)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    sys.exit("the episode's seccomp filter could not be installed: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"""
"""Installs the seccomp filter (setpriv set no_new_privs before), then execs the rest: the last
link of the namespaces chain, after every mount and the chroot the filter would refuse."""


def _own_dev(mount: str, mkdir: str, ln: str, target: str) -> list[str]:
    """A /dev as bubblewrap's `--dev` makes it: a tmpfs with the harmless host devices bound in,
    the fd links, a private devpts instance and a fresh /dev/shm; no other host device node."""
    lines = [f"{mount} -t tmpfs -o mode=0755,nosuid,size=1m curriculab-dev {target}"]
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        lines += [f": > {target}/{name}", f"{mount} --bind /dev/{name} {target}/{name}"]
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1")):
        lines.append(f"{ln} -s {link} {target}/{name}")
    lines += [f"{ln} -s /proc/self/fd/2 {target}/stderr", f"{mkdir} {target}/pts {target}/shm"]
    lines.append(f"{mount} -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts {target}/pts || true")
    lines += [f"{ln} -s pts/ptmx {target}/ptmx", f"{mount} -t tmpfs -o mode=1777,nosuid,nodev shm {target}/shm"]
    return lines


def _unshared(mounts: list[str], root: Path, uid: int, workdir: str, env: dict[str, str], argv: list[str]) -> list[str]:
    """bubblewrap's mounts made by hand, for a machine without bubblewrap (the `namespaces`
    isolation; root only): `unshare` gives new mount, pid, network, IPC and UTS namespaces, a script
    mounts a tmpfs root with the same folders bound in (a /dev of its own, `_own_dev`), then chroot,
    drop to the box's uid, install the seccomp filter and exec `argv`. What it lacks next to
    bubblewrap: read-only submounts of the host's read-only folders."""
    root.mkdir(parents=True, exist_ok=True)
    program = seccomp_program(())
    if program is not None and not os.path.exists("/usr/bin/python3"):
        raise EpisodeError("the namespaces isolation installs its seccomp filter with /usr/bin/python3, absent here")
    q = shlex.quote
    mount, mkdir, ln = (q(_system_tool(name)) for name in ("mount", "mkdir", "ln"))  # a bare PATH has none
    lines = ["set -e", f"{mount} -t tmpfs -o mode=0755 curriculab-root {q(str(root))}"]
    args = iter(mounts)
    for option in args:
        if option == "--symlink":
            target, path = next(args), next(args)
            lines.append(f"{ln} -s {q(target)} {q(str(root) + path)}")
            continue
        if option == "--remount-ro":
            path = next(args)
            lines.append(f"{mount} -o remount,ro,bind {q(str(root) + path.rstrip('/'))}")
            continue
        if option in ("--proc", "--dev", "--tmpfs"):
            source, path = None, next(args)
        else:  # --bind, --ro-bind
            source, path = next(args), next(args)
        target = q(str(root) + path)
        lines.append(f"{mkdir} -p {target}")
        if option == "--proc":
            lines.append(f"{mount} -t proc proc {target}")
        elif option == "--dev":
            lines += _own_dev(mount, mkdir, ln, target)
        elif option == "--tmpfs":
            lines.append(f"{mount} -t tmpfs tmpfs {target}")
        else:
            lines.append(f"{mount} --bind {q(source or '')} {target}")
            if option == "--ro-bind":
                lines.append(f"{mount} -o remount,ro,bind {target}")
    settings = [f"{key}={value}" for key, value in env.items()]
    lines.append('exec "$@"')
    return [
        _system_tool("unshare"),
        "--mount",
        "--pid",
        "--net",
        "--ipc",
        "--uts",
        "--fork",
        "--kill-child",
        "--propagation",
        "private",
        "/bin/sh",
        "-c",
        "\n".join(lines),
        "sh",
        _system_tool("chroot"),
        str(root),
        "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        *(["/usr/bin/python3", "-I", "-S", "-c", _SECCOMP_THEN_EXEC, program.hex()] if program else []),
        "/usr/bin/env",
        "-i",
        "-C",
        workdir,
        *settings,
        *argv,
    ]


def _copy_tree(source: Path, target: Path, owner: int) -> None:
    """Copy a file or folder and give it to `owner`: regular files, folders and symlinks (as links)
    only, so a FIFO or socket the agent left cannot stall or reach the copier."""
    entries = [(source, target)]
    while entries:
        here, there = entries.pop()
        if here.is_symlink():
            there.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(here), there)
        elif here.is_dir():
            there.mkdir(parents=True, exist_ok=True)
            shutil.copymode(here, there)
            entries += [(child, there / child.name) for child in here.iterdir()]
        elif here.is_file():
            there.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(here, there)
        else:
            continue
        if os.geteuid() == 0:
            os.lchown(there, owner, owner)


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
                    stack += [(f"{path}/{entry.name}", depth + 1) for entry in os.scandir(here)]
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


def _cap(data: bytes, limit: int) -> tuple[str, int]:
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
    text, _ = _cap(output, 64 * 1024)
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


class _BwrapAgent:
    """The agent's side on bubblewrap: the episode's folders on the host, its shell a child process."""

    def __init__(self, task: TerminalTask, limits: EpisodeLimits, oracle: bool, isolation: str = "bwrap"):
        self.task, self.limits, self.oracle, self.backend = task, limits, oracle, isolation
        self.shell: subprocess.Popen | None = None
        self.bash: int | None = None
        self.box = _Box(limits, "curriculab-episode-", isolation=isolation)
        try:
            self.roots = writable_roots(task)
            uid = self.box.uid
            for name in (*self.roots, "tmp", "root", "logs/agent", "solution"):
                self.box.folder(f"fs/{name}", uid)
            self.box.folder("fs/logs", uid)
            for placement in task.image.placements:
                _copy_tree(placement.source, self.box.root / "fs" / placement.target.lstrip("/"), uid)
            self.box.folder("fs/" + task.workdir.lstrip("/"), uid)
        except BaseException:
            self.box.end()
            raise

    command_prefix = ""
    replays_setup = True

    def start_shell(self) -> None:
        fs = self.box.root / "fs"
        binds = [arg for name in (*self.roots, "tmp", "root", "logs") for arg in ("--bind", str(fs / name), f"/{name}")]
        if self.oracle:
            binds += ["--ro-bind", str(fs / "solution"), "/solution"]
        self.shell = self.box.start(
            binds,
            self.task.workdir,
            agent_env(self.task),
            ["/bin/bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        os.set_blocking(self.shell.stdout.fileno(), False)  # type: ignore[union-attr]

    def shell_started(self) -> None:
        """Called once the shell answered: find its host pid (below bwrap and its init; with the
        namespaces isolation, unshare's child is the shell itself)."""
        assert self.shell is not None
        init = processes.descendants(self.shell.pid)[:1]
        if self.backend == "namespaces":
            self.bash = init[0] if init else None
            return
        children = processes.children(init[0]) if init else []
        self.bash = min(children) if children else None

    def alive(self) -> bool:
        return self.shell is not None and self.shell.poll() is None

    def write(self, data: bytes) -> bool:
        assert self.shell is not None and self.shell.stdin is not None
        try:
            self.shell.stdin.write(data)
            self.shell.stdin.flush()
            return True
        except BrokenPipeError:
            return False

    def read(self, timeout: float) -> bytes | None:
        """What the shell wrote within `timeout` (None: nothing yet; b"": it exited)."""
        assert self.shell is not None and self.shell.stdout is not None
        ready, _, _ = select.select([self.shell.stdout], [], [], timeout)
        if not ready:
            return None
        chunk = self.shell.stdout.read(1 << 16)
        if not chunk:
            self.shell.wait()
        return chunk

    def exit_code(self) -> int:
        return self.shell.returncode if self.shell is not None and self.shell.returncode is not None else 1

    def before_command(self) -> set[int]:
        return set(processes.descendants(self.shell.pid)) if self.shell is not None else set()

    def interrupt(self, before: set[int]) -> None:
        """As Ctrl-C: SIGUSR1 makes the shell's trap return once the command's processes are killed."""
        if self.bash is not None:
            processes.signal(self.bash, 10)
        if self.shell is not None:
            processes.kill(*(pid for pid in processes.descendants(self.shell.pid) if pid not in before))

    def end_shell(self) -> None:
        shell, self.shell = self.shell, None
        if shell is not None:
            processes.end_namespace(shell)
            for stream in (shell.stdin, shell.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
        self.box.kill_all()

    def files(self) -> tuple[dict[str, tuple[int, int]], bool]:
        """Every file of the task's folders and /root: its size and modification time, by path (a
        display-safe name: bytes that are not UTF-8 escaped); False past `judged_entries` entries,
        folders counted (the walk stops there)."""
        fs = self.box.root / "fs"
        found: dict[str, tuple[int, int]] = {}
        stack = [fs / name for name in (*self.roots, "root")]
        seen, bound = 0, self.limits.judged_entries
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            seen += len(entries)
            if seen > bound:
                return found, False
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found[display_path("/" + str(Path(entry.path).relative_to(fs)))] = (info.st_size, info.st_mtime_ns)
        return found, True

    def after_command(self) -> tuple[bytes | None, dict[str, tuple[int, int]], bool]:
        """The trap's record of the last command and the files now (`files`)."""
        return self.ran(), *self.files()

    def ran(self) -> bytes | None:
        """The trap's record of the last command (its last MiB), removed for the next."""
        path = self.box.root / "fs" / RAN_FILE.lstrip("/")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - RAN_BYTES), os.SEEK_SET)
            return os.read(fd, RAN_BYTES)
        finally:
            os.close(fd)
            path.unlink(missing_ok=True)

    def stage_solution(self, source: Path | None) -> None:
        target = self.box.root / "fs" / "solution"
        for child in target.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        if source is not None:
            _copy_tree(source, target, self.box.uid)

    def judge(self, step: Step) -> StepVerdict:
        tests_bytes = sum(f.stat().st_size for d in step.test_dirs for f in d.rglob("*") if f.is_file())
        # room for everything the agent left (at most its own disk) and as much again for the tests' writes
        judge = _Box(
            self.limits, "curriculab-verifier-", 2 * self.limits.disk_bytes + tests_bytes, isolation=self.backend
        )
        try:
            uid = judge.uid
            tests = judge.folder("tests")  # the pristine tests land first
            for source in step.test_dirs:
                shutil.copytree(source, tests, dirs_exist_ok=True)
            for path in [tests, *tests.rglob("*")]:
                path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
            fs = judge.folder("fs")
            refused = JudgedCopy(self.limits, self.roots).copy(self.box.root / "fs", fs, uid)
            if refused is not None:
                return refused_verdict(step, refused)
            for name in ("tmp", "root"):
                judge.folder(f"fs/{name}", uid)
            logs = judge.folder("fs/logs/verifier", uid)
            binds = [arg for name in (*self.roots, "tmp", "root") for arg in ("--bind", str(fs / name), f"/{name}")]
            binds += ["--ro-bind", str(tests), "/tests", "--bind", str(logs), "/logs/verifier"]
            timeout = min(self.limits.verifier_timeout_s, step.verifier_timeout_s or self.limits.verifier_timeout_s)
            started = time.monotonic()
            process = judge.start(
                binds,
                self.task.workdir,
                verifier_env(step),
                ["/bin/bash", f"/tests/{step.test_script}"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            try:
                data, _ = process.communicate(timeout=timeout)
                error = None
            except subprocess.TimeoutExpired:
                processes.end_namespace(process)
                data, _ = process.communicate()
                error = f"the verifier timed out after {timeout:g} s"
            judge.kill_all()  # nothing the tests started outlives them
            return verdict(step, data, process.returncode, time.monotonic() - started, logs, error)
        finally:
            judge.end()

    def close(self) -> None:
        self.end_shell()
        self.box.end()


BACKENDS = ("bwrap", "docker", "namespaces")
"""Where episodes run: bubblewrap over this machine's root (read-only), Docker through the SDK, or
`namespaces`: bubblewrap's mounts made with unshare and chroot, for a machine without bubblewrap
(root only; the same seccomp filter, no read-only submounts: weaker, said so wherever it is used)."""


class Episode:
    """One attempt at `task`. Use as a context manager (or call `close`):

        with Episode(task) as episode:
            episode.run("ls")
            result = episode.finish()

    `oracle=True` mounts each step's `solution/` at /solution (Harbor's oracle agent). `backend`
    is `bwrap` (default), `docker` (a local or remote daemon, `DOCKER_HOST`; `docker_client`
    to pass one) or `namespaces` (no bubblewrap: see `BACKENDS`)."""

    def __init__(
        self,
        task: TerminalTask,
        limits: EpisodeLimits | None = None,
        oracle: bool = False,
        backend: str = "bwrap",
        docker_client: object | None = None,
        observe: bool = False,
    ):
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
        self.task, self.limits, self.oracle, self.observe = task, limits or EpisodeLimits(), oracle, observe
        self._files: dict[str, tuple[int, int]] = {}
        self._observed_whole = True
        self.step_index = 0
        self._step_started = time.monotonic()
        self.verdicts: list[StepVerdict] = []
        self.commands: list[CommandResult] = []
        self._agent: _BwrapAgent | DockerAgent | None = None
        if backend == "docker":
            from curriculab.training.terminal.docker import DockerAgent

            self._agent = DockerAgent(task, self.limits, oracle, docker_client)
        else:
            self._agent = _BwrapAgent(task, self.limits, oracle, backend)
        try:
            self._start_shell()
            self._replay_setup()
        except BaseException:
            self.close()
            raise
        if observe:
            assert self._agent is not None
            self._files, self._observed_whole = self._agent.files()
        self._step_started = time.monotonic()  # the agent's time starts when the environment is ready

    @property
    def backend(self) -> str:
        assert self._agent is not None
        return self._agent.backend

    def _start_shell(self) -> None:
        assert self._agent is not None
        self._agent.start_shell()
        # a timed-out command is interrupted as Ctrl-C would: its processes are killed and SIGUSR1
        # makes the shell return from the sourced command at once (a pure-shell loop included)
        probe = self._send("trap 'return 124 2>/dev/null' USR1", self.limits.setup_timeout_s, raw=True)
        if probe.exit_code != 0 or probe.shell_exited:
            raise EpisodeError(f"the episode's shell did not start: {probe.output.strip()[:500]}")
        self._agent.shell_started()

    def _replay_setup(self) -> None:
        assert self._agent is not None
        deadline = time.monotonic() + self.limits.setup_timeout_s
        commands = self.task.image.commands if self._agent.replays_setup else []
        for command in commands:
            done = self._send(command, max(1.0, deadline - time.monotonic()))
            if done.exit_code != 0:
                raise NeedsImage(
                    f"needs its image: its Dockerfile's `RUN {command}` fails here "
                    f"(exit {done.exit_code}: {done.output.strip()[-300:]})"
                )
        if commands:  # a RUN may have moved the shell; the agent starts at the workdir
            self._send(f"cd {shlex.quote(self.task.workdir)}", self.limits.setup_timeout_s)
        if self.oracle:
            assert self._agent is not None
            self._agent.stage_solution(self.task.steps[0].solution_dir)

    # -- the agent's turn ---------------------------------------------------------------------

    @property
    def instruction(self) -> str:
        """What the agent is told for the current step."""
        return self.task.steps[self.step_index].instruction

    @property
    def finished(self) -> bool:
        return self.step_index >= len(self.task.steps)

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """Run one command in the agent's shell; its state (cwd, variables, jobs) carries on.
        Within the step's `[agent] timeout_sec` (as Harbor bounds an agent): past it, nothing runs."""
        if self.finished:
            raise EpisodeError("the episode is over: every step has been verified")
        assert self._agent is not None
        timeout = timeout_s or self.limits.command_timeout_s
        budget = self.task.steps[self.step_index].agent_timeout_s
        if budget is not None:
            left = budget - (time.monotonic() - self._step_started)
            if left <= 0:
                over = CommandResult(
                    command,
                    f"[the agent's time for this step ({budget:g} s) is over: nothing ran]",
                    124,
                    0.0,
                    True,
                    step=self.step_index,
                )
                self.commands.append(over)
                return over
            timeout = min(timeout, left)
        if not self._agent.alive():
            self._start_shell()
        sent_at = time.time()
        nonce = secrets.token_hex(8)
        result = self._send(command, timeout, nonce=nonce, record=self.observe)
        result.step, result.started_at = self.step_index, sent_at
        if self.observe:  # what the shell executed (the trap's record) and what it changed, seen from outside
            record, files, whole = self._agent.after_command()
            result.executed, result.ran_note = executed_commands(record, nonce, command)
            if whole and self._observed_whole:
                result.changed = sorted(
                    path for path in files.keys() | self._files.keys() if files.get(path) != self._files.get(path)
                )
            elif not whole:
                result.unobserved = f"too many entries to observe (more than {self.limits.judged_entries:,})"
            self._files, self._observed_whole = files, whole
        self.commands.append(result)
        return result

    def _send(
        self, command: str, timeout_s: float, raw: bool = False, nonce: str | None = None, record: bool = False
    ) -> CommandResult:
        agent = self._agent
        assert agent is not None
        nonce = nonce or secrets.token_hex(8)
        before = agent.before_command()
        started = time.monotonic()
        # sourced, not eval'd in a function: `declare` stays global and the USR1 trap's `return` ends it
        # recorded: the trap re-armed, then a marker; what the record holds after it is this command's
        prefix = f"{RECORD_TRAP}{agent.command_prefix}: {nonce}; " if record else agent.command_prefix
        run = command if raw else f"{prefix}. <(printf '%s' {shlex.quote(command)})"
        line = f"{run} </dev/null 2>&1; printf '\\n{nonce} %d\\n' \"$?\"\n"
        if not agent.write(line.encode()):
            return self._shell_gone(command, b"", started)
        sentinel = f"\n{nonce} ".encode()
        buffer, timed_out, deadline = bytearray(), False, started + timeout_s
        kept_limit = max(self.limits.output_bytes * 4, 1 << 20)
        dropped_middle = 0
        while True:
            at = buffer.find(sentinel)
            if at >= 0 and buffer.find(b"\n", at + len(sentinel)) >= 0:
                end = buffer.find(b"\n", at + len(sentinel))
                code = int(buffer[at + len(sentinel) : end] or b"1")
                output, dropped = _cap(bytes(buffer[:at]), self.limits.output_bytes)
                if timed_out:
                    output += f"\n[timed out after {timeout_s:g} s: killed]"
                    code = 124
                return CommandResult(
                    command, output, code, time.monotonic() - started, timed_out, dropped + dropped_middle
                )
            now = time.monotonic()
            if now >= deadline:
                if timed_out:  # interrupted and still no sentinel: the shell itself is stuck
                    return self._shell_gone(command, bytes(buffer), started, timed_out=True)
                timed_out = True
                agent.interrupt(before)
                deadline = now + 5.0
                continue
            chunk = agent.read(min(0.5, deadline - now))
            if chunk is None:
                continue
            if not chunk:  # EOF: the shell exited
                return self._shell_gone(command, bytes(buffer), started, timed_out)
            buffer += chunk
            if len(buffer) > kept_limit:  # keep the head and the tail, count the middle
                head = self.limits.output_bytes
                drop = len(buffer) - kept_limit
                del buffer[head : head + drop]
                dropped_middle += drop

    def _shell_gone(self, command: str, data: bytes, started: float, timed_out: bool = False) -> CommandResult:
        assert self._agent is not None
        code = self._agent.exit_code()
        output, dropped = _cap(data, self.limits.output_bytes)
        self._agent.end_shell()
        return CommandResult(
            command,
            output + "\n[the shell exited; the next command starts a new one at the workdir]",
            code,
            time.monotonic() - started,
            timed_out,
            dropped,
            shell_exited=True,
        )

    # -- the verifier's turn ------------------------------------------------------------------

    def end_step(self) -> StepVerdict:
        """End the agent's turn on the current step (killing all it started) and judge it."""
        if self.finished:
            raise EpisodeError("the episode is over: every step has been verified")
        assert self._agent is not None
        if self._agent.alive():  # the shell's own builtin kill stops the agent's processes at once
            self._agent.write(b"kill -9 -1 2>/dev/null; exit 0\n")
        self._agent.end_shell()
        verdict = self._agent.judge(self.task.steps[self.step_index])
        self.verdicts.append(verdict)
        self.step_index += 1
        self._step_started = time.monotonic()
        if not self.finished and self.oracle:
            self._agent.stage_solution(self.task.steps[self.step_index].solution_dir)
        return verdict

    def finish(self) -> EpisodeResult:
        """Judge the current step and every step not yet run (unattempted steps are judged as left)."""
        while not self.finished:
            self.end_step()
        return EpisodeResult(self.task.task_id, self.verdicts, self.task.reward_strategy, self.commands)

    def close(self) -> None:
        """Kill everything the episode started and remove its files."""
        agent, self._agent = self._agent, None
        if agent is not None:
            agent.close()

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
