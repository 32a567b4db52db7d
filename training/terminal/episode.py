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
import dataclasses
import functools
import os
import re
import secrets
import select
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from curriculab.training.sandbox import processes
from curriculab.training.sandbox.backends import SANDBOX_BACKENDS, Bwrap, Namespaces, ProcessBackend
from curriculab.training.sandbox.isolation import Cgroup, UidLease, seccomp_program
from curriculab.training.terminal import sibling
from curriculab.training.terminal.shared import (
    RAN_BYTES,
    RAN_FILE,
    RECORD_TRAP,
    SHOWN,
    CommandResult,
    EpisodeAgent,
    EpisodeError,
    EpisodeLimits,
    EpisodeResult,
    JudgedCopy,
    MarkerBroken,
    NeedsImage,
    StepVerdict,
    agent_env,
    capped,
    display_path,
    executed_commands,
    refused_verdict,
    verdict,
    verifier_env,
    writable_roots,
)
from curriculab.training.terminal.task import Step, TerminalTask


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


def _mount_tmpfs(path: Path, size: int, inodes: int) -> bool:
    """Mount a tmpfs capped in bytes and in files at `path` (root only): the mount(2) call itself, no
    `mount` process."""
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size},nr_inodes={inodes},mode=0711".encode()
    return bool(libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", 0, options) == 0)


def _unmount(path: Path) -> None:
    ctypes.CDLL(None, use_errno=True).umount2(str(path).encode(), 2)  # MNT_DETACH


class _Box:
    """Host side of one sandbox: a directory (a tmpfs capped in bytes and files when root), a uid of
    its own, a cgroup where writable; `end()` kills everything that ran as its uid and removes it all."""

    def __init__(
        self,
        limits: EpisodeLimits,
        prefix: str,
        disk_bytes: int | None = None,
        isolation: str = "bwrap",
        inodes: int | None = None,
    ):
        self.limits, self.isolation = limits, isolation
        self.lease = UidLease()
        self.uid = self.lease.uid
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.mounted = os.geteuid() == 0 and _mount_tmpfs(
            self.root, disk_bytes or limits.disk_bytes, inodes or limits.inodes
        )
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
    ) -> subprocess.Popen[bytes]:
        """Start `argv` in this sandbox: a `sh` joins the cgroup, sets the rlimits and execs the
        backend's launch (`sandbox.backends`: setpriv to this box's uid, then bubblewrap; or, with the
        `namespaces` isolation, the same mounts made by `unshare` and a script). Popen's own `user=`
        would cost a full fork of the harness (no vfork), tens of milliseconds in a trainer-sized
        process."""
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
        # only the folders bound are writable: "/" is remounted read-only last. bubblewrap's /dev is a
        # tmpfs of the sandbox's uid capped in nothing: read-only, its /dev/shm a folder of this box;
        # the namespaces' /dev is root's, its /dev/shm a tmpfs capped as the box is
        backend: ProcessBackend
        if self.isolation == "namespaces":
            backend = Namespaces(self.root / "newroot", f"size={limits.disk_bytes},nr_inodes={limits.inodes}")
            dev = ["--dev", "/dev"]
        else:
            backend = Bwrap()
            shm = self.folder(f"shm-{secrets.token_hex(4)}", self.uid)
            dev = ["--dev", "/dev", "--remount-ro", "/dev", "--bind", str(shm), "/dev/shm"]
        mounts = [*_shown_args(), "--proc", "/proc", *dev, *binds, "--remount-ro", "/"]
        launch = backend.launch(mounts, workdir, env, argv, uid=self.uid, seccomp=seccomp_program(()))
        try:
            return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
                ["/bin/sh", "-c", script, "sh", *procs, "--", *launch.command],
                start_new_session=True,
                pass_fds=launch.pass_fds,
                **popen,
            )
        finally:
            launch.close()

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


class _BwrapAgent:
    """The agent's side on bubblewrap: the episode's folders on the host, its shell a child process."""

    def __init__(self, task: TerminalTask, limits: EpisodeLimits, oracle: bool, isolation: str = "bwrap"):
        self.task, self.limits, self.oracle, self.backend = task, limits, oracle, isolation
        self.shell: subprocess.Popen[bytes] | None = None
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
        chunk: bytes | None = self.shell.stdout.read(1 << 16)
        if not chunk:
            self.shell.wait()
        return chunk

    def exit_code(self) -> int:
        return self.shell.returncode if self.shell is not None and self.shell.returncode is not None else 1

    def before_command(self) -> frozenset[int]:
        return frozenset(processes.descendants(self.shell.pid)) if self.shell is not None else frozenset()

    def interrupt(self, before: frozenset[int]) -> None:
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
                listing = os.scandir(folder)
            except OSError:
                continue
            with listing:  # read lazily: a folder of a million entries costs no more than the bound
                for entry in listing:
                    seen += 1
                    if seen > bound:
                        return found, False
                    self._note(fs, entry, found, stack)
        return found, True

    @staticmethod
    def _note(fs: Path, entry: os.DirEntry[str], found: dict[str, tuple[int, int]], stack: list[Path]) -> None:
        """Record one entry of the walk: a folder to walk next, or a file's size and time."""
        try:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
                return
            info = entry.stat(follow_symlinks=False)
        except OSError:
            return
        found[display_path("/" + str(Path(entry.path).relative_to(fs)))] = (info.st_size, info.st_mtime_ns)

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

    def judge(self, step: Step, replay: Sequence[str] | None = None) -> StepVerdict:
        tests_bytes = sum(f.stat().st_size for d in step.test_dirs for f in d.rglob("*") if f.is_file())
        # room for everything the agent left (at most its own disk) and as much again for the tests' writes
        tests_files = sum(1 for d in step.test_dirs for _ in d.rglob("*"))
        judge = _Box(
            self.limits,
            "curriculab-verifier-",
            2 * self.limits.disk_bytes + tests_bytes,
            isolation=self.backend,
            inodes=2 * self.limits.inodes + tests_files + 1024,
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
            env = verifier_env(step)
            # the agent's programs the checks run go to a sandbox of their own (`sibling`)
            runner = sibling.BoxRunner(fs, self.roots, uid, self.limits, self.backend, env)
            server = sibling.SocketServer(judge.root / "run", uid, runner, timeout)
            binds += ["--bind", str(server.folder), sibling.SOCKET_FOLDER]
            started = time.monotonic()
            try:
                process = judge.start(
                    binds,
                    self.task.workdir,
                    {**env, sibling.ENV_VAR: sibling.SOCKET_PATH},
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
                # the agent's last test-runner check, replayed where its programs run (`CheckRun`)
                check = (
                    sibling.replay(runner, replay, self.task.workdir, self.limits.command_timeout_s) if replay else None
                )
            finally:
                server.close()
            judge.kill_all()  # nothing the tests started outlives them
            if server.failure is not None:
                raise sibling.SiblingError(server.failure)
            judged = verdict(step, data, process.returncode, time.monotonic() - started, logs, error)
            return dataclasses.replace(judged, check_run=check)
        finally:
            judge.end()

    def close(self) -> None:
        self.end_shell()
        self.box.end()


class Episode:
    """One attempt at `task`. Use as a context manager (or call `close`):

        with Episode(task) as episode:
            episode.run("ls")
            result = episode.finish()

    `oracle=True` mounts each step's `solution/` at /solution (Harbor's oracle agent). `backend`
    is `bwrap` (default), `docker` (a local or remote daemon, `DOCKER_HOST`; `docker_client`
    to pass one) or `namespaces` (no bubblewrap: see `sandbox.backends`)."""

    def __init__(
        self,
        task: TerminalTask,
        limits: EpisodeLimits | None = None,
        oracle: bool = False,
        backend: str = "bwrap",
        docker_client: object | None = None,
        observe: bool = False,
    ):
        if backend not in SANDBOX_BACKENDS:
            raise ValueError(f"backend {backend!r} is not one of {', '.join(SANDBOX_BACKENDS)}")
        self.task, self.limits, self.oracle, self.observe = task, limits or EpisodeLimits(), oracle, observe
        self._files: dict[str, tuple[int, int]] = {}
        self._observed_whole = True
        self.step_index = 0
        self._step_started = time.monotonic()
        self.verdicts: list[StepVerdict] = []
        self.commands: list[CommandResult] = []
        self.forfeited: str | None = None
        """Why the agent's doing ended the episode (`MarkerBroken`); it then scores 0."""
        self._sentinels: list[bytes] = []
        """Every end-of-command marker sent so far: one seen again is a duplicate, the agent's doing."""
        self._agent: EpisodeAgent | None = None
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
        try:
            probe = self._send("trap 'return 124 2>/dev/null' USR1", self.limits.setup_timeout_s, raw=True)
        except MarkerBroken as broken:  # a fresh shell the agent never touched: the harness's failure
            raise EpisodeError(f"the episode's shell did not start: {broken}") from None
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
        if self.forfeited is not None:
            raise MarkerBroken(self.forfeited)
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
        try:
            result = self._send(command, timeout, nonce=nonce, record=self.observe)
        except MarkerBroken as broken:
            self._forfeit(str(broken))
            self.commands.append(
                CommandResult(
                    command, f"[{broken}]", 1, time.time() - sent_at, step=self.step_index, started_at=sent_at
                )
            )
            raise
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
        self._sentinels = [*self._sentinels[-63:], sentinel]  # an imitation's real marker comes right after it
        buffer, timed_out, deadline = bytearray(), False, started + timeout_s
        kept_limit = max(self.limits.output_bytes * 4, 1 << 20)
        dropped_middle = 0
        while True:
            at = buffer.find(sentinel)
            if at >= 0 and buffer.find(b"\n", at + len(sentinel)) >= 0:
                end = buffer.find(b"\n", at + len(sentinel))
                code = self._status(bytes(buffer[at + len(sentinel) : end]), bytes(buffer[:at]), bytes(buffer[end:]))
                output, dropped = capped(bytes(buffer[:at]), self.limits.output_bytes)
                if timed_out:
                    output += f"\n[timed out after {timeout_s:g} s: killed]"
                    code = 124
                return CommandResult(
                    command, output, code, time.monotonic() - started, timed_out, dropped + dropped_middle
                )
            now = time.monotonic()
            if now >= deadline:
                if timed_out:  # interrupted, alive, and still no marker: the agent's shell keeps it back
                    raise MarkerBroken(
                        f"the shell never ended the command with the harness's marker, even {self._INTERRUPT_GRACE_S:g} s after "
                        "it was interrupted (its printf redefined, its output sent elsewhere, or a trap ignored)"
                    )
                timed_out = True
                agent.interrupt(before)
                deadline = now + self._INTERRUPT_GRACE_S
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

    _STATUS = re.compile(rb"[0-9]{1,3}")
    _INTERRUPT_GRACE_S = 10.0
    """How long an interrupted shell has to end the command with its marker (a loaded machine's
    signal and, on Docker, the interrupting exec included); past it the marker is missing."""

    def _status(self, text: bytes, output: bytes, after: bytes) -> int:
        """The exit status the marker carries; `MarkerBroken` when it carries none (0-255), or when
        the output around it holds a marker sent before (the agent's trap or function imitated one:
        the real one arrives after it)."""
        if not self._STATUS.fullmatch(text) or int(text) > 255:
            raise MarkerBroken(f"the end-of-command marker carried {text[:40]!r}, not an exit status")
        self._check_duplicates(output + after)
        return int(text)

    def _check_duplicates(self, data: bytes) -> None:
        """`MarkerBroken` if `data` (output the harness read) holds a marker it has already seen."""
        current = self._sentinels[-1] if self._sentinels else None
        for sentinel in self._sentinels:
            if sentinel in data:
                which = "this command's" if sentinel == current else "an earlier command's"
                raise MarkerBroken(f"{which} end-of-command marker came twice: the shell imitated it")

    def _forfeit(self, reason: str) -> None:
        """End the episode as the agent's doing: the shell stops, the steps left score 0 (`end_step`)."""
        self.forfeited = reason
        if self._agent is not None:
            self._agent.end_shell()

    def _shell_gone(self, command: str, data: bytes, started: float, timed_out: bool = False) -> CommandResult:
        assert self._agent is not None
        code = self._agent.exit_code()
        output, dropped = capped(data, self.limits.output_bytes)
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
            self._await_exit()
        self._agent.end_shell()
        step = self.task.steps[self.step_index]
        if self.forfeited is not None:
            verdict = refused_verdict(step, f"the agent forfeited the episode: {self.forfeited}")
        else:
            last = self.step_index == len(self.task.steps) - 1
            verdict = self._agent.judge(step, self._check_to_replay() if last else None)
        self.verdicts.append(verdict)
        self.step_index += 1
        self._step_started = time.monotonic()
        if not self.finished and self.oracle:
            self._agent.stage_solution(self.task.steps[self.step_index].solution_dir)
        return verdict

    def _check_to_replay(self) -> list[str] | None:
        """The last test-runner check the agent's shell ran after its last change (an observing
        episode's record), for the harness to replay (`CheckRun`); None when there is none."""
        if not self.observe:
            return None
        from curriculab.taxonomy.coders.environment import checks_after_last_edit
        from curriculab.trajectory.shell import test_runner

        runners = [words for words in checks_after_last_edit(self.commands) if test_runner(words)]
        return runners[-1] if runners else None

    def _await_exit(self) -> None:
        """Read the shell's output until it exits (5 s at most): its own `kill -9 -1` has then run, so
        it cannot kill what the harness starts next as the agent's uid (Docker's listing of the files
        for the judge). An earlier marker seen again in that output (the real one behind an
        imitation) forfeits the episode before it is judged."""
        assert self._agent is not None
        pending, deadline = bytearray(), time.monotonic() + 5.0
        while (left := deadline - time.monotonic()) > 0:
            chunk = self._agent.read(min(0.2, left))
            if chunk == b"":
                break
            pending += chunk or b""
            del pending[: -(1 << 20)]
        if self.forfeited is None:
            try:
                self._check_duplicates(bytes(pending))
            except MarkerBroken as broken:
                self._forfeit(str(broken))

    def finish(self) -> EpisodeResult:
        """Judge the current step and every step not yet run (unattempted steps are judged as left;
        a forfeited episode's are refused, 0, without running the verifier)."""
        while not self.finished:
            self.end_step()
        return EpisodeResult(
            self.task.task_id, self.verdicts, self.task.reward_strategy, self.commands, forfeited=self.forfeited
        )

    def close(self) -> None:
        """Kill everything the episode started and remove its files."""
        agent, self._agent = self._agent, None
        if agent is not None:
            agent.close()

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
