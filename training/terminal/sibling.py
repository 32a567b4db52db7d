"""The agent's programs outside the judge: a checker asks the harness to run one of the agent's
programs, and the harness runs it in a *sibling* sandbox of its own, made the way episode boxes are.

Why: a verifier that runs the agent's code itself lends that code its own rights — it could read
the answer key in /tests, write /logs/verifier or leave a process that rewrites the verdict after
the checks. A sibling has the judge's copy of the agent's folders and the judge's /tmp (where a
check puts a call's inputs and finds its outputs) bound in, a /root of its own, and nothing else:
never /tests, /solution or /logs. It runs as a uid leased for it where the harness is root (the
shared folders are given to that uid for each call and back to the judge's after it), and nothing a
call started outlives it.

The checker speaks to the harness over a unix socket whose path is in `$CURRICULAB_RUN`
(`SOCKET_PATH`, in a folder only the judge's uid can open); without that variable there is no
harness and the checker runs the program itself (`suite/milestones.py`'s `run`: a foreign harness
such as Harbor). One request per connection, each a frame (`frame`): 4 bytes of length, big-endian,
then JSON. The request is `{"argv": [...], "cwd": "/app", "stdin": base64, "timeout": seconds}`;
the reply `{"returncode": n, "stdout": base64, "stderr": base64, "timed_out": bool, "truncated":
bool}`, `{"oserror": [errno, strerror, filename]}` (it could not start) or `{"error": why}`.

Per backend:
- bwrap and namespaces: the harness listens on a socket in a folder of the judge's box, bound at
  `SOCKET_FOLDER` in the judge. A verdict's first call starts a sibling box (`_Box`: its own uid
  lease, cgroup, pid, mount, network and IPC namespaces, tmpfs) whose server (`BOX_SERVER`) runs
  each call and, before it answers, kills every other process in the box (the box's pid namespace
  is the verdict's, not the call's: a box per call cost ~30 ms a program on bubblewrap). The box
  ends with the verdict, or at once when a program kills or stops its server.
- docker: the daemon may be remote, so nothing on the harness's machine can be bound in. A relay
  (`RELAY`, the system python3 of the judge's container, as the judge's uid) listens at the same
  path and forwards each request over its `docker exec` stream; the harness runs the program with
  another `docker exec` into the judge's container as a leased uid, and the judge's own folders
  (/tests, /logs/verifier, /root and the socket's folder) are closed to that uid. There is no pid
  namespace per call: the call's processes are the uid's, killed (`kill -9 -1` as that uid) before
  the reply, and they can see the judge's processes in /proc but not signal them or read their
  memory, environment or files. A task image without python3 gets no relay: its checks run the
  agent's programs themselves, as under a foreign harness.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
import select
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from curriculab.training.sandbox import processes
from curriculab.training.terminal.shared import CheckRun, EpisodeLimits
from curriculab.trajectory.shell import reported_tests, test_runner

ENV_VAR = "CURRICULAB_RUN"
"""The judge's environment variable naming the socket; absent: no harness answers."""
SOCKET_FOLDER = "/run/curriculab"
SOCKET_PATH = SOCKET_FOLDER + "/run.sock"
FRAME_BYTES = 16 << 20
"""Largest request (its stdin included) the harness reads."""
OUTPUT_BYTES = 4 << 20
"""Most of each of a call's stdout and stderr handed back (its head); the rest is dropped."""
MAX_ARGS = 4096


class SiblingError(RuntimeError):
    """The harness could not run a checker's request: an infrastructure failure, not the agent's."""


@dataclass(frozen=True)
class Request:
    argv: tuple[str, ...]
    cwd: str
    stdin: bytes
    timeout: float

    @classmethod
    def parse(cls, payload: bytes, max_timeout: float) -> Request:
        """A checker's request, or ValueError saying what is wrong with it."""
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise ValueError("a request is a JSON object")
        argv, cwd, stdin, timeout = data.get("argv"), data.get("cwd"), data.get("stdin", ""), data.get("timeout", 20)
        if not isinstance(argv, list) or not argv or len(argv) > MAX_ARGS or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty list of strings")
        if any("\0" in a for a in argv) or not isinstance(cwd, str) or not cwd.startswith("/") or "\0" in cwd:
            raise ValueError("cwd must be an absolute path; no argument may hold a NUL")
        if not isinstance(stdin, str) or not isinstance(timeout, (int, float)) or not 0 < timeout:
            raise ValueError("stdin must be base64 text and timeout a positive number of seconds")
        try:
            data_in = base64.b64decode(stdin, validate=True)
        except binascii.Error:
            raise ValueError("stdin is not base64") from None
        return cls(tuple(argv), cwd, data_in, min(float(timeout), max_timeout))


@dataclass
class Reply:
    returncode: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False
    oserror: tuple[Any, ...] | None = None
    """(errno, strerror, filename) where the program could not be started (`subprocess.run` raises it)."""

    def encode(self) -> dict[str, Any]:
        if self.oserror is not None:
            return {"oserror": list(self.oserror)}
        return {
            "returncode": self.returncode,
            "stdout": base64.b64encode(self.stdout).decode(),
            "stderr": base64.b64encode(self.stderr).decode(),
            "timed_out": self.timed_out,
            "truncated": self.truncated,
        }


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return len(body).to_bytes(4, "big") + body


def read_exactly(read: Callable[[int], bytes], size: int) -> bytes | None:
    """`size` bytes from `read`, or None at an end of stream before them."""
    data = bytearray()
    while len(data) < size:
        chunk = read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def read_frame(read: Callable[[int], bytes]) -> bytes | None:
    head = read_exactly(read, 4)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > FRAME_BYTES:
        raise ValueError(f"a request of {size:,} bytes is over the {FRAME_BYTES:,}-byte bound")
    return read_exactly(read, size)


class Runner(Protocol):
    """Runs one request in a sandbox of its own; `cancel` ends the call in flight (the verifier's
    time ran out)."""

    def __call__(self, request: Request) -> Reply: ...

    def cancel(self) -> None: ...


class _Served:
    """What both servers share: one request at a time, and the first infrastructure failure kept."""

    def __init__(self, runner: Runner, max_timeout: float):
        self.runner, self.max_timeout = runner, max_timeout
        self.failure: str | None = None
        self.calls = 0
        self.thread: threading.Thread | None = None

    def answer(self, payload: bytes) -> dict[str, Any]:
        try:
            request = Request.parse(payload, self.max_timeout)
        except (ValueError, UnicodeDecodeError) as exc:  # the checker's mistake: it is told, nothing runs
            return {"error": f"bad request: {exc}"}
        self.calls += 1
        try:
            return self.runner(request).encode()
        except Exception as exc:  # the harness failed to run it: the episode's failure, never a score
            self.failure = self.failure or f"the sandbox for the agent's program failed: {exc}"
            return {"error": self.failure}


class SocketServer(_Served):
    """The harness's side on bwrap and namespaces: a listening socket in `folder` (on the host, bound
    into the judge at `SOCKET_FOLDER`), served by a thread until `close`."""

    def __init__(self, folder: Path, owner: int, runner: Runner, max_timeout: float):
        super().__init__(runner, max_timeout)
        self.folder = folder
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / "run.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        os.chmod(path, 0o600)
        if os.geteuid() == 0:
            os.chown(folder, owner, owner)
            os.chown(path, owner, owner)
        self.listener.listen(4)
        self.listener.settimeout(0.2)
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="curriculab-sibling", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(10)  # a request is sent at once; a checker that stalls is dropped
                try:
                    payload = read_frame(connection.recv)
                    if payload is None:
                        continue
                    connection.settimeout(None)
                    connection.sendall(frame(self.answer(payload)))
                except (OSError, ValueError):
                    continue

    def close(self) -> None:
        self.closed.set()
        try:  # wakes the thread's accept at once (a close alone leaves it to its 0.2 s timeout: ~130 ms a verdict)
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.runner.cancel()
        if self.thread is not None:
            self.thread.join(timeout=self.max_timeout + 10)


def give(tops: Sequence[Path], uid: int, bound: int) -> None:
    """Make `uid` the owner of every entry under `tops` (links themselves, never what they point
    to), at most `bound` entries: the folders a call shares are its uid's while it runs and the
    judge's after. Root only (elsewhere every box runs as the harness's own uid)."""
    if os.geteuid() != 0:
        return
    stack, seen = list(tops), 0
    while stack and seen < bound:
        path = stack.pop()
        seen += 1
        try:
            info = os.lstat(path)
            if info.st_uid != uid or info.st_gid != uid:
                os.lchown(path, uid, uid)
            if stat.S_ISDIR(info.st_mode):
                stack += [Path(entry.path) for entry in os.scandir(path)]
        except OSError:  # gone meanwhile
            continue


# The box's server (bwrap and namespaces): the system python3 as the box's uid, importing nothing
# but os, sys and select (its start is on every verdict's path), not dumpable (no process of that
# uid may open its pipes or memory through /proc). For each request on its stdin (a nonce, then a
# binary request: `_box_request`) it runs the program (stdin, stdout, stderr memfds), kills every
# other process of the box (`kill(-1)`: the program and all it left) until none is left, empties
# /root, and answers on its stdout with the nonce and a binary reply (`_box_reply`).
BOX_SERVER = r"""
import os, select, sys
try:
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    sys.exit(1)
inp, out, me, bound = sys.stdin.buffer, sys.stdout.buffer, os.getpid(), int(sys.argv[1])
def exactly(size):
    data = b""
    while len(data) < size:
        chunk = inp.read(size - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data
def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
def stop_others():
    for _ in range(5000):
        try:
            os.kill(-1, 9)
        except ProcessLookupError:
            pass
        reap()
        if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (me, 1)]:
            return
        select.select([], [], [], 0.001)
def empty(folder):
    for entry in os.scandir(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)
                empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
def head(fd):
    os.lseek(fd, 0, 0)
    data = os.read(fd, bound + 1)
    os.close(fd)
    return data
out.write(b"R")
out.flush()
while True:
    nonce = exactly(16)
    body = exactly(int.from_bytes(exactly(4), "big"))
    timeout, size = int.from_bytes(body[:4], "big") / 1000, int.from_bytes(body[4:8], "big")
    words = body[8 : 8 + size].split(b"\0")
    cwd, argv, stdin = words[0], words[1:], body[8 + size :]
    fds = [os.memfd_create(name) for name in ("stdin", "stdout", "stderr")]
    os.write(fds[0], stdin)
    os.lseek(fds[0], 0, 0)
    status, timed_out, error = -1000, 0, 0
    check_r, check_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(check_r)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            os.chdir(cwd)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(check_w, str(exc.errno or 0).encode())
        os._exit(255)
    os.close(check_w)
    failed = os.read(check_r, 64)
    os.close(check_r)
    if failed:
        error = int(failed)
        os.waitpid(pid, 0)
    else:
        pidfd = os.pidfd_open(pid)
        if select.select([pidfd], [], [], timeout)[0]:
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        else:
            timed_out = 1
        os.close(pidfd)
    stop_others()
    if timed_out:
        os.waitpid(pid, 0)
    os.close(fds[0])
    stdout, stderr = head(fds[1]), head(fds[2])
    truncated = int(len(stdout) > bound or len(stderr) > bound)
    stdout, stderr = stdout[:bound], stderr[:bound]
    empty("/root")
    reply = status.to_bytes(4, "big", signed=True) + bytes([timed_out, truncated]) + error.to_bytes(4, "big")
    reply += len(stdout).to_bytes(4, "big") + stdout + stderr
    out.write(nonce + len(reply).to_bytes(4, "big") + reply)
    out.flush()
"""


def _box_request(request: Request) -> bytes:
    """A request as the box's server reads it: timeout (ms), the size of the NUL-separated cwd and
    argv, those, then stdin."""
    words = b"\0".join(os.fsencode(word) for word in (request.cwd, *request.argv))
    timeout_ms = min(int(request.timeout * 1000), 0xFFFFFFFF)
    return timeout_ms.to_bytes(4, "big") + len(words).to_bytes(4, "big") + words + request.stdin


def _box_reply(data: bytes) -> Reply:
    """The box's server's answer: status (-1000 for none), timed out, truncated, errno (0 for none),
    the size of stdout, stdout, then stderr."""
    status = int.from_bytes(data[:4], "big", signed=True)
    error = int.from_bytes(data[6:10], "big")
    if error:
        return Reply(None, oserror=(error, os.strerror(error)))
    size = int.from_bytes(data[10:14], "big")
    return Reply(
        None if status == -1000 else status, data[14 : 14 + size], data[14 + size :], bool(data[4]), bool(data[5])
    )


class BoxRunner:
    """Runs the requests of one verdict in a sibling box on bubblewrap or the namespaces isolation,
    started at the first request (by the server's thread, which lives until the verdict ends: the
    box dies with it, bubblewrap's `--die-with-parent`; a verdict whose checks run nothing of the
    agent's starts none): the judge's `roots` and /tmp (under `judge_fs` on the host) bound
    in, a /root of its own, the judge's environment `env` (without `ENV_VAR`), the episode's limits,
    its own uid, cgroup and pid, mount, network and IPC namespaces. One box serves the verdict's
    calls one after another (a box per call costs ~30 ms a program on bubblewrap and ~110 ms on
    namespaces, doubling `tasks check`); between calls nothing of the last one is left: its server
    kills every other process in the box before it answers. A program that kills the server or
    outlasts its time ends the box; the next call gets a fresh one."""

    def __init__(
        self,
        judge_fs: Path,
        roots: Sequence[str],
        judge_uid: int,
        limits: EpisodeLimits,
        isolation: str,
        env: dict[str, str],
    ):
        self.judge_fs, self.roots, self.judge_uid = judge_fs, [*roots, "tmp"], judge_uid
        self.limits, self.isolation = limits, isolation
        self.env = {key: value for key, value in env.items() if key != ENV_VAR}
        self.bound = 4 * limits.judged_entries  # the judge's copy and what earlier calls added to it
        self.seconds: list[float] = []
        self.box: Any = None  # `episode._Box`, while one runs
        self.server: subprocess.Popen[bytes] | None = None
        # `cancel` comes from the verdict's thread while the server's thread may be starting a box or
        # reading an answer: once cancelled, no box starts and what the ending breaks is no failure
        self.cancelled = False
        self._starting = threading.Lock()

    def _start(self) -> None:
        from curriculab.training.terminal.episode import _Box  # episode imports this module

        self.box = _Box(self.limits, "curriculab-sibling-", isolation=self.isolation)
        home = self.box.folder("fs/root", self.box.uid)
        binds = [arg for name in self.roots for arg in ("--bind", str(self.judge_fs / name), f"/{name}")]
        binds += ["--bind", str(home), "/root"]
        self.server = self.box.start(
            binds,
            "/",
            self.env,
            ["/usr/bin/python3", "-I", "-S", "-c", BOX_SERVER, str(OUTPUT_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        if self._read(1, 30) != b"R":
            self.close()
            raise SiblingError("the sandbox for the agent's programs did not start")

    def _read(self, size: int, timeout: float) -> bytes | None:
        """`size` bytes of the server's answer within `timeout`, else None."""
        assert self.server is not None and self.server.stdout is not None
        fd, data, deadline = self.server.stdout.fileno(), b"", time.monotonic() + timeout
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def __call__(self, request: Request) -> Reply:
        started = time.monotonic()
        shared = [self.judge_fs / name for name in self.roots]
        try:
            with self._starting:
                if self.cancelled:
                    return Reply(-9, b"", b"the verdict ended before the program ran\n")
                if self.server is None:  # the verdict's first call, or the last one ended the box
                    self._start()
            assert self.box is not None and self.server is not None and self.server.stdin is not None
            give(shared, self.box.uid, self.bound)
            nonce = secrets.token_bytes(16)
            body = _box_request(request)
            try:
                self.server.stdin.write(nonce + len(body).to_bytes(4, "big") + body)
                self.server.stdin.flush()
            except BrokenPipeError:
                pass
            answer = self._read(20, request.timeout + 10)
            payload = (
                None if answer is None or answer[:16] != nonce else self._read(int.from_bytes(answer[16:], "big"), 10)
            )
            if payload is None:  # killed, stopped or imitated: the program's doing
                self.close()
                return Reply(-9, b"", b"the program ended or stopped the sandbox it ran in\n")
            return _box_reply(payload)
        except (OSError, ValueError, AssertionError):
            if not self.cancelled:
                raise
            return Reply(-9, b"", b"the verdict ended before the program did\n")  # its pipes closed under it
        finally:
            give(shared, self.judge_uid, self.bound)
            self.seconds.append(time.monotonic() - started)

    def cancel(self) -> None:
        with self._starting:
            self.cancelled = True
        self.close()

    def close(self) -> None:
        box, self.box, server, self.server = self.box, None, self.server, None
        if server is not None:
            processes.end_namespace(server)  # its init: the kernel ends every process in the box
            for stream in (server.stdin, server.stdout):
                if stream is not None:
                    stream.close()
        if box is not None:
            # the rest (anything of its uid or cgroup, its tmpfs, cgroup and lease) off the verdict's
            # path; not a daemon, so an exiting harness still waits for it
            threading.Thread(target=box.end, name="curriculab-sibling-end").start()


# The relay inside a Docker judge: listens at the socket path (its folder closed to every other
# uid), hands each request to the harness over its stdout and the reply back from its stdin.
RELAY = r"""
import os, socket, sys
path, bound = sys.argv[1], int(sys.argv[2])
os.chmod(os.path.dirname(path), 0o700)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(4)
out, inp = sys.stdout.buffer, sys.stdin.buffer
def exactly(read, size):
    data = b""
    while len(data) < size:
        chunk = read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data
out.write(b"R")
out.flush()
while True:
    conn, _ = server.accept()
    with conn:
        conn.settimeout(10)
        try:
            head = exactly(conn.recv, 4)
            if head is None or int.from_bytes(head, "big") > bound:
                continue
            body = exactly(conn.recv, int.from_bytes(head, "big"))
        except OSError:
            continue
        if body is None:
            continue
        out.write(head + body)
        out.flush()
        head = exactly(inp.read, 4)
        reply = head and exactly(inp.read, int.from_bytes(head, "big"))
        if not reply:
            sys.exit(0)
        conn.settimeout(None)
        try:
            conn.sendall(head + reply)
        except OSError:
            pass
"""


class DockerStream:
    """Our frames inside a `docker exec`'s multiplexed stream (8-byte headers per chunk)."""

    def __init__(self, sock: Any):
        self.sock, self.raw, self.data = sock, b"", bytearray()

    def read(self, size: int) -> bytes:
        while not self.data:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return b""
            self.raw += chunk
            while len(self.raw) >= 8 and len(self.raw) >= 8 + int.from_bytes(self.raw[4:8], "big"):
                end = 8 + int.from_bytes(self.raw[4:8], "big")
                self.data += self.raw[8:end]
                self.raw = self.raw[end:]
        out = bytes(self.data[:size])
        del self.data[:size]
        return out


class RelayServer(_Served):
    """The harness's side on Docker: the relay's `docker exec` stream, served by a thread."""

    def __init__(self, container: Any, judge_uid: int, runner: Runner, max_timeout: float):
        super().__init__(runner, max_timeout)
        api = container.client.api
        created = api.exec_create(
            container.id,
            ["python3", "-I", "-S", "-c", RELAY, SOCKET_PATH, str(FRAME_BYTES)],
            stdin=True,
            user=f"{judge_uid}:{judge_uid}",
        )
        raw = api.exec_start(created["Id"], socket=True)
        self.sock = getattr(raw, "_sock", raw)
        self.sock.settimeout(30)
        self.stream = DockerStream(self.sock)
        if self.stream.read(1) != b"R":
            self.sock.close()
            raise SiblingError("the relay did not start in the judge's container (no python3 there?)")
        self.sock.settimeout(None)
        self.thread = threading.Thread(target=self._serve, name="curriculab-sibling-relay", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while True:
                payload = read_frame(self.stream.read)
                if payload is None:
                    return
                self.sock.sendall(frame(self.answer(payload)))
        except (OSError, ValueError):
            return

    def close(self) -> None:
        self.runner.cancel()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if self.thread is not None:
            self.thread.join(timeout=self.max_timeout + 10)


def exec_split(
    container: Any,
    command: list[str],
    user: str,
    stdin: bytes | None,
    env: dict[str, str] | None,
    workdir: str | None,
    timeout: float,
    on_timeout: Callable[[], None],
) -> tuple[int | None, bytes, bytes, bool, bool]:
    """`docker exec` keeping stdout and stderr apart, each cut at `OUTPUT_BYTES` (the rest read and
    dropped), stopped through `on_timeout` past `timeout`: (exit code, stdout, stderr, timed out,
    truncated)."""
    api = container.client.api
    created = api.exec_create(
        container.id, command, stdin=stdin is not None, user=user, environment=env, workdir=workdir
    )
    raw = api.exec_start(created["Id"], socket=True)
    sock = getattr(raw, "_sock", raw)
    streams = {1: bytearray(), 2: bytearray()}
    truncated = timed_out = False
    deadline = time.monotonic() + timeout
    try:
        if stdin is not None:
            sock.sendall(stdin)
            sock.shutdown(socket.SHUT_WR)
        pending = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0 and not timed_out:
                timed_out = True
                on_timeout()
                deadline = time.monotonic() + 10  # its stream closes once its processes are gone
                continue
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                chunk = sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                break
            pending += chunk
            while len(pending) >= 8 and len(pending) >= 8 + int.from_bytes(pending[4:8], "big"):
                end = 8 + int.from_bytes(pending[4:8], "big")
                kept = streams.get(pending[0], streams[1])
                room = OUTPUT_BYTES - len(kept)
                truncated = truncated or end - 8 > room
                kept += pending[8 : 8 + max(0, min(room, end - 8))]
                pending = pending[end:]
    finally:
        sock.close()
    code = None if timed_out else api.exec_inspect(created["Id"])["ExitCode"]
    return code, bytes(streams[1]), bytes(streams[2]), timed_out, truncated


# Runs the request's argv, then ends every other process of the call's uid (its own included not).
_WRAP = '"$@"; status=$?; kill -9 -1 2>/dev/null; exit $status'


class ContainerRunner:
    """Runs each request in the judge's container as `uid` (not the judge's): the agent's folders
    `roots` and /tmp given to `uid` for the call, back to the judge's after."""

    def __init__(
        self,
        container: Any,
        roots: Sequence[str],
        judge_uid: int,
        uid: int,
        env: dict[str, str],
        run: Callable[..., tuple[int, bytes]],
    ):
        self.container, self.judge_uid, self.uid, self.run = container, judge_uid, uid, run
        self.tops = [f"/{name}" for name in (*roots, "tmp")]
        self.env = {key: value for key, value in env.items() if key != ENV_VAR}
        self.env["HOME"] = "/tmp"  # the judge's /root is closed to it
        self.seconds: list[float] = []

    def _give(self, uid: int) -> None:
        code, output = self.run(self.container, ["chown", "-hR", f"{uid}:{uid}", *self.tops], "0:0")
        if code != 0:
            raise SiblingError(f"could not hand the agent's folders over: {output[-300:]!r}")

    def cancel(self) -> None:
        try:
            self._kill()
        except Exception:  # the container is gone already (the verifier's time ran out): so is the call
            pass

    def _kill(self) -> None:
        self.run(self.container, ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0"], f"{self.uid}:{self.uid}")

    def __call__(self, request: Request) -> Reply:
        started = time.monotonic()
        self._give(self.uid)
        try:
            code, out, err, timed_out, truncated = exec_split(
                self.container,
                ["/bin/sh", "-c", _WRAP, "sh", *request.argv],
                f"{self.uid}:{self.uid}",
                request.stdin,
                self.env,
                request.cwd,
                request.timeout,
                self._kill,
            )
            self._kill()  # what the program left (the wrapper's own kill covers a program that exits)
            return Reply(code, out, err, timed_out, truncated)
        finally:
            self._give(self.judge_uid)
            self.seconds.append(time.monotonic() - started)


def close_judge_folders(container: Any, judge_uid: int, run: Callable[..., tuple[int, bytes]]) -> None:
    """On Docker, where the call's uid shares the judge's container: the tests readable by the
    judge's group only (root's, with the CHOWN capability the judge's container keeps for root),
    the judge's /logs/verifier and /root by the judge alone (the relay closes its own folder)."""
    for script, user in (
        ("chgrp -R {uid} /tests && chmod -R o-rwx /tests", "0:0"),
        ("chmod 0700 /logs/verifier /root", "{uid}:{uid}"),
    ):
        code, output = run(container, ["/bin/sh", "-c", script.format(uid=judge_uid)], user.format(uid=judge_uid))
        if code != 0:
            raise SiblingError(f"could not close the judge's folders: {output[-300:]!r}")


JUDGE_CAPS = ("CHOWN", "DAC_READ_SEARCH")
"""What the judge's container keeps for root alone (the harness's own `docker exec`s: handing the
shared folders over and back, reading folders the agent closed); every other uid there runs with
no capability and no new privileges."""


def docker_siblings(
    container: Any,
    roots: Sequence[str],
    judge_uid: int,
    uid: int,
    env: dict[str, str],
    max_timeout: float,
    run: Callable[..., tuple[int, bytes]],
) -> RelayServer | None:
    """Close the judge's folders to `uid` and start the relay; None where the judge's image has no
    python3 for it (its checks then run the agent's programs themselves)."""
    close_judge_folders(container, judge_uid, run)
    try:
        return RelayServer(
            container, judge_uid, ContainerRunner(container, roots, judge_uid, uid, env, run), max_timeout
        )
    except (SiblingError, OSError):
        return None


PINNED_RUNNER = """import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
import os, runpy
name = sys.argv.pop(1)
__import__(name)
sys.path.insert(0, os.getcwd())
runpy.run_module(name, run_name="__main__", alter_sys=True)
"""
"""`python3 -m RUNNER …` as the replay runs it: the runner imported before the workdir is on the
path, so an agent's `unittest.py` or `pytest.py` there is not what runs (`python3 -m` puts the
workdir first); then the workdir first, as `-m` has it, for the tests to import the agent's code."""


def _pinned(words: Sequence[str]) -> tuple[str, ...]:
    """The replay's argv for `words`: a Python module runner pinned (`PINNED_RUNNER`), else as they are."""
    if "-m" not in words[1:]:
        return tuple(words)
    at = list(words).index("-m", 1)
    return (*words[:at], "-c", PINNED_RUNNER, *words[at + 1 :])


def replay(run: Runner, words: Sequence[str], workdir: str, timeout: float) -> CheckRun | None:
    """Run the agent's check `words` again as the harness's own call (`CheckRun`): None unless they
    name a system test runner (`shell.test_runner`)."""
    runner = test_runner(words)
    if runner is None:
        return None
    reply = run(Request(_pinned(words), workdir, b"", timeout))
    output = (reply.stdout + reply.stderr).decode("utf-8", errors="replace")
    ran = reply.oserror is None and not reply.timed_out and reported_tests(runner, reply.returncode, output)
    return CheckRun(tuple(words), runner, reply.returncode, ran, output[-4096:])
