"""The code that runs inside the sandboxes (stdlib only; the system /usr/bin/python3 with -I -S).

Two roles, each a long-lived process in its own sandbox, each as its own uid:

- `zygote`: a clean interpreter with common modules pre-imported that never runs model code and
  never holds it. For each completion it forks a child and hands it three descriptors from the
  harness: the channel to the judge, a memfd with the completion's code and a memfd for its output.
  Where it may (bubblewrap: the zygote alone keeps CAP_SYS_ADMIN inside the sandbox's user
  namespace), the child is born (one clone) as pid 1 of fresh mount, IPC and pid namespaces and
  mounts its own /tmp and /proc; then it drops every capability, installs the full seccomp filter,
  and only then reads the code. That child is made ahead, while the completion before runs (a
  spare, waiting confined for its descriptors; one lost meanwhile is replaced by a fresh clone).
  When the harness ends the completion, the zygote kills the child, which as its namespace's init
  takes every process of that namespace with it; the child's /tmp and every IPC object die with
  it, and the spare, in namespaces of its own, lives on. Where the child cannot have namespaces (Docker, some unsandboxed hosts), the zygote
  empties the shared scratch directory (locked folders too) and removes every SysV IPC object and
  POSIX message queue of its namespace instead. In a container (which may run on another machine:
  nothing can be handed over as a descriptor) the code arrives in the message instead, the zygote
  makes the two memfds itself and connects to the judge over an abstract socket named by the run's
  nonce in the network namespace the two containers share; it returns the output's tail at the end.
- `judge`: runs a problem's tests. Each test's `assert`s run here, with the entry point bound to a
  proxy that calls into the completion's child over its socket; replies are untrusted data, bounded
  before they are parsed and decoded against the test's deadline. Tests may come from a user's
  problems file, so they run sandboxed too, never in the harness.

Values cross strictly: only exact builtin types, so an object with an always-true `__eq__`
cannot. Nothing the completion does (exiting, printing, patching builtins, writing to any file
descriptor) reaches a verdict: the child only ever answers calls.
"""

import builtins
import errno
import functools
import gc
import json
import math
import os
import select
import signal
import socket
import stat
import struct
import sys
import time

MAX_MESSAGE = 32 * 1024 * 1024
MAX_REPLY_BYTES = MAX_MESSAGE
"""Largest reply the judge reads from a completion (a 32 MiB JSON result still fits the judge's
memory twice over: parsed, then decoded)."""
MAX_REPLY_NODES = 2_000_000
"""Most containers (lists, dicts) a reply may hold. Sets and dicts of any size are built with the
test's deadline checked as they grow, so colliding hashes cost a timeout, not the judge."""
CHILD_FILTER = "child.bpf"
"""The seccomp filter (in the box) a completion's process installs before it reads the code."""
CHANNEL = None
"""The child's socket to the judge (module global so red-team tests can reach it as `__main__.CHANNEL`)."""
PRELOADED = ("math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string", "typing",
             "operator", "statistics", "fractions", "decimal", "random", "copy", "json", "hashlib", "datetime")


class Unencodable(TypeError):
    """A value that is not plain data."""


def encode(value, depth=0):
    """Plain data to JSON-safe tagged form; anything else (subclasses included) is refused."""
    if depth > 1000:
        raise Unencodable("nested too deeply")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:  # hex: linear both ways, and no 4,300-digit limit on int<->str
        return value if -(2 ** 53) < value < 2 ** 53 else {"int": hex(value)}
    if t is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if t is list:
        return [encode(v, depth + 1) for v in value]
    if t is tuple:
        return {"tuple": [encode(v, depth + 1) for v in value]}
    if t is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if t is set or t is frozenset:
        return {t.__name__: [encode(v, depth + 1) for v in value]}
    if t is bytes or t is bytearray:
        return {t.__name__: value.hex()}
    if t is complex:
        return {"complex": [value.real, value.imag]}
    if t is range:
        return {"range": [encode(value.start), encode(value.stop), encode(value.step)]}
    if t in _VIEWS:
        return {_VIEWS[t]: [encode(v, depth + 1) for v in value]}
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):
        # an iterator (a generator, map, zip, ...) crosses as one over its items: `list(f())` sees
        # them, `f() == [...]` stays False, as in the caller's own process
        return {"iter": [encode(v, depth + 1) for v in value]}
    raise Unencodable(f"{t.__module__}.{t.__qualname__} is not plain data")


_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}


MISSING_ENTRY_POINT = "MissingEntryPoint"
"""The error a child reports when the completion does not define the function the tests call."""


class RefusedReply(Exception):
    pass


def decode(value, deadline=None, budget=None):
    """Tagged form back to values. Untrusted input (a reply): hashed containers are capped and the
    deadline is checked as it goes."""
    budget = budget if budget is not None else [0]
    budget[0] += 1
    if deadline is not None and budget[0] % 1000 == 0 and time.monotonic() > deadline:
        raise TimeoutError
    if isinstance(value, list):
        return [decode(v, deadline, budget) for v in value]
    if isinstance(value, dict):
        if len(value) != 1:
            raise RefusedReply("a malformed value")
        (tag, body), = value.items()
        if tag == "int":
            return _int(body)
        if tag == "float":
            return float(body)
        if tag == "tuple":
            return tuple(decode(v, deadline, budget) for v in body)
        if tag == "dict":
            return {decode(k, deadline, budget): decode(v, deadline, budget) for k, v in body}
        if tag == "set":
            return {decode(v, deadline, budget) for v in body}
        if tag == "frozenset":
            return frozenset(decode(v, deadline, budget) for v in body)
        if tag == "bytes":
            return bytes.fromhex(body)
        if tag == "bytearray":
            return bytearray.fromhex(body)
        if tag == "complex":
            return complex(*body)
        if tag == "range":
            return range(*decode(body, deadline, budget))
        if tag == "iter":
            return iter(decode(body, deadline, budget))
        if tag == "keys":
            return dict.fromkeys(decode(body, deadline, budget)).keys()
        if tag == "values":
            return dict(enumerate(decode(body, deadline, budget))).values()
        if tag == "items":
            return dict(decode(body, deadline, budget)).items()
        raise RefusedReply(f"unknown tag {tag!r}")
    return value


def _int(text):
    if not isinstance(text, str) or not text.lstrip("-").startswith("0x"):
        raise RefusedReply("a malformed int")
    return int(text, 16)


def update_in_place(original, new):
    """Make `original` (a test's argument) equal `new` (its value after the call) without replacing
    it, so a test that checks its own list after an in-place sort sees the sort. Same-typed
    containers are updated item by item, so references to inner lists stay good too."""
    t = type(original)
    if t is not type(new):
        return
    if t is list:
        if len(original) == len(new):
            for i, (old, value) in enumerate(zip(original, new)):
                if type(old) in _MUTABLE and type(old) is type(value):
                    update_in_place(old, value)
                elif old is not value:
                    original[i] = value
        else:
            original[:] = new
    elif t is dict:
        for key in [k for k in original if k not in new]:
            del original[key]
        for key, value in new.items():
            old = original.get(key, _MISSING)
            if type(old) in _MUTABLE and type(old) is type(value):
                update_in_place(old, value)
            else:
                original[key] = value
    elif t is set:
        original.intersection_update(new)
        original.update(new)
    elif t is bytearray:
        original[:] = new


_MUTABLE = (list, dict, set, bytearray)
_MISSING = object()


# --- framing: 4-byte length + JSON, on stream sockets; a file descriptor may ride along ---

def send(sock, message, fds=()):
    data = json.dumps(message).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({"id": message.get("id"), "ok": False, "error": "OverflowError",
                           "message": f"return value too large (over {MAX_MESSAGE >> 20} MiB as JSON)"}).encode()
    payload = struct.pack(">I", len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [payload], list(fds))
        payload = payload[sent:]
    if payload:
        sock.sendall(payload)


def _recv_exact(sock, n, deadline, fds, max_fds=3):
    chunks = b""
    while len(chunks) < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
        try:
            if fds is not None and not fds:
                chunk, received, _, _ = socket.recv_fds(sock, n - len(chunks), max_fds)
                fds.extend(received)
            else:
                chunk = sock.recv(n - len(chunks))
        except socket.timeout:
            raise TimeoutError from None
        if not chunk:
            raise EOFError
        chunks += chunk
    return chunks


def recv(sock, deadline=None, limit=MAX_MESSAGE, with_fds=False):
    """One message (and the descriptors sent with it, as a list, when `with_fds`)."""
    fds = [] if with_fds else None
    (size,) = struct.unpack(">I", _recv_exact(sock, 4, deadline, fds))
    if size > limit:
        raise RefusedReply(f"an oversized message ({size:,} bytes)")
    data = _recv_exact(sock, size, deadline, fds)
    if data.count(b"[") + data.count(b"{") > MAX_REPLY_NODES:  # an upper bound, counted at C speed
        raise RefusedReply("a message with too many nested values")
    try:
        message = json.loads(data)
    except (ValueError, RecursionError):
        raise RefusedReply("a malformed message") from None
    if not isinstance(message, dict):
        raise RefusedReply("a message that is not an object")
    return (message, fds) if with_fds else message


# --- zygote ---

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWPID, _SIGCHLD = 0x00020000, 0x08000000, 0x20000000, 17
_CLONE_SYSCALL = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000


_NATIVE = None


class Stdio:
    """Control over stdin and stdout (a container's attach stream): the socket calls the framing
    uses, with `settimeout` honoured by waiting on stdin."""

    def __init__(self):
        self.timeout = None

    def settimeout(self, seconds):
        self.timeout = seconds

    def recv(self, size):
        if self.timeout is not None and not select.select([0], [], [], self.timeout)[0]:
            raise socket.timeout
        return os.read(0, size)

    def sendall(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    def close(self):
        for fd in (0, 1):
            try:
                os.close(fd)
            except OSError:
                pass


CHANNEL_PREFIX = "\0curriculab-channel-"
"""The judge's abstract socket for one run (the prefix and the run's nonce), in the network
namespace a container pair shares: no network there but loopback, as the zygote's container
joins the judge's. The judge listens only until the zygote, which connects before the completion
exists, is accepted."""


def oom_kills():
    """How many processes the kernel's OOM killer took in this container's memory cgroup."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _native():
    """ctypes, libc, the structures capset and seccomp take, and libc called with the GIL held (for
    clone), made once (the zygote makes them before it forks, so no completion's process pays for them)."""
    global _NATIVE
    if _NATIVE is None:
        import ctypes

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        _NATIVE = (ctypes, ctypes.CDLL(None, use_errno=True), Header, Data, Program,
                   ctypes.PyDLL(None, use_errno=True))
    return _NATIVE


def _fork_into_namespaces():
    """`os.fork`, but the child is born in fresh mount, IPC and pid namespaces, as pid 1 of its
    own: one `clone` where `unshare` and a second fork took two processes and a waiter. Like
    `os.fork`, it holds the GIL across the call and runs Python's fork hooks on both sides; the
    raw syscall skips glibc's fork handlers, which is safe because the zygote has one thread.
    Raises OSError where the namespaces cannot be had (no CAP_SYS_ADMIN here, or an architecture
    whose clone number is not listed): the zygote then cleans up after each child instead."""
    if _CLONE_SYSCALL is None:
        raise OSError(errno.ENOSYS, f"no clone syscall number for {os.uname().machine}")
    native = _native()
    ctypes, libc_holding_gil = native[0], native[5]
    ulong = ctypes.c_ulong
    ctypes.pythonapi.PyOS_BeforeFork()
    pid = libc_holding_gil.syscall(ctypes.c_long(_CLONE_SYSCALL),
                                   ulong(_SIGCHLD | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWPID),
                                   ulong(0), ulong(0), ulong(0), ulong(0))
    if pid == 0:
        ctypes.pythonapi.PyOS_AfterFork_Child()
        return 0
    error = ctypes.get_errno()
    ctypes.pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(error, os.strerror(error))
    return pid


def _mount_private(scratch, tmp_bytes):
    """In a child of `_fork_into_namespaces`: mounts of its own from here on, a private tmpfs on
    `scratch` and a /proc that shows only this completion."""
    ctypes, libc = _native()[:2]
    flags = ctypes.c_ulong
    ok = libc.mount(None, b"/", None, flags(_MS_REC | _MS_PRIVATE), None) == 0
    ok = ok and libc.mount(b"tmpfs", scratch.encode(), b"tmpfs", flags(_MS_NOSUID | _MS_NODEV),
                           f"size={tmp_bytes},mode=0700".encode()) == 0
    ok = ok and libc.mount(b"proc", b"/proc", b"proc", flags(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC), None) == 0
    if not ok:
        os._exit(70)  # never run a completion in a half-made world


class Confinement:
    """What a completion's process needs to confine itself, made by the zygote before it forks (a
    ctypes structure built in the child cost it ~0.2 ms of copy-on-write faults and allocation)."""

    def __init__(self, filter_program):
        ctypes, libc, Header, Data, Program = _native()[:5]
        self.filter = bool(filter_program)
        self._libc, self._ulong = libc, ctypes.c_ulong
        self._header, self._data = ctypes.byref(Header(0x20080522, 0)), (Data * 2)()
        self._buffer = ctypes.create_string_buffer(filter_program, len(filter_program))  # kept: the program points at it
        self._program = ctypes.byref(Program(len(filter_program) // 8, ctypes.cast(self._buffer, ctypes.c_void_p)))

    def apply(self):
        """No capabilities, no new privileges, the full seccomp filter: from here on this process and
        everything it starts are as confined as the sandbox can make them."""
        libc, ulong = self._libc, self._ulong
        if libc.capset(self._header, self._data) != 0:
            os._exit(71)
        if libc.prctl(ulong(38), ulong(1), ulong(0), ulong(0), ulong(0)) != 0:  # PR_SET_NO_NEW_PRIVS
            os._exit(72)
        if self.filter and libc.prctl(ulong(22), ulong(2), self._program, ulong(0), ulong(0)) != 0:  # PR_SET_SECCOMP, FILTER
            os._exit(73)


def _read_all(fd):
    """A memfd's whole content, read by its size (a fixed 1 MiB buffer cost each completion ~0.2 ms of page faults)."""
    size = os.fstat(fd).st_size
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(fd, max(size - offset, 0) + 1, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _child(fds, scratch, tmp_bytes, confinement, private):
    if private:
        _mount_private(scratch, tmp_bytes)
    confinement.apply()
    _completion(fds, scratch)


class _Spare:
    """A completion's process made ahead of its completion, while the one before runs: cloned into
    namespaces of its own, its /tmp and /proc mounted, confined, and waiting for the three
    descriptors of the completion it will run. Handing them over replaces a clone and that setup
    on the way to a completion's first call (~1 ms each)."""

    def __init__(self, pid, sock, tmp_bytes):
        self.pid, self.socket, self.tmp_bytes = pid, sock, tmp_bytes

    @classmethod
    def make(cls, control, scratch, tmp_bytes, confinement):
        """A new spare, or None where none can be made now (a completion holds every process its
        uid may have, say): the next completion's process is then cloned when it is asked for."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = _fork_into_namespaces()
        except OSError:
            mine.close()
            theirs.close()
            return None
        if pid == 0:
            control.close()
            mine.close()
            code = 1
            try:
                os.setpgid(0, 0)
                _mount_private(scratch, tmp_bytes)
                confinement.apply()
                try:
                    _, fds = recv(theirs, with_fds=True)
                except (EOFError, OSError, RefusedReply):
                    os._exit(0)  # never needed: the zygote let it go
                theirs.close()
                if len(fds) == 3:
                    _completion(fds, scratch)
                    code = 0
            finally:
                os._exit(code)
        theirs.close()
        return cls(pid, mine, tmp_bytes)

    def hand(self, fds, tmp_bytes):
        """Give it a completion's descriptors: its pid, or None where it cannot take them (it is gone,
        or its /tmp was made for another size; a live one is then ended)."""
        try:
            alive = os.waitpid(self.pid, os.WNOHANG)[0] == 0  # a dead one is reaped here, never signalled
        except ChildProcessError:
            alive = False
        try:
            if alive and tmp_bytes == self.tmp_bytes:
                send(self.socket, {"run": True}, fds=fds)
                return self.pid
        except OSError:
            pass
        finally:
            self.socket.close()
        if alive:
            _end_private(self.pid)
        return None


def _kill(child):
    try:
        os.kill(child, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(child):
    try:
        os.waitpid(child, 0)
    except ChildProcessError:
        pass


def _end_private(child):
    """End a completion born as pid 1 of its own pid namespace: SIGKILL to it takes every process of
    that namespace with it (the kernel kills them and waits for them before the init's exit is
    done), and nothing outside it, so the spare made for the next completion lives on. Returns
    once it is reaped."""
    _kill(child)
    _reap(child)


def _completion(fds, scratch):
    """In a completion's process, confined: read the code, load it, answer the judge's calls."""
    global CHANNEL
    channel_fd, code_fd, out_fd = fds
    code = _read_all(code_fd).decode("utf-8", errors="replace")  # only now, and only here, is the code read
    os.close(code_fd)
    channel = socket.socket(fileno=channel_fd)
    CHANNEL = channel
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    try:  # the kernel's OOM killer, where a cgroup caps the sandbox, takes the completion before the zygote
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    os.chdir(scratch)
    namespace = {"__name__": "solution"}
    try:
        exec(compile(code, "solution.py", "exec"), namespace)
    except BaseException as exc:  # a completion that exits or raises while loading
        send(channel, {"load_error": f"{type(exc).__name__}: {str(exc)[:500]}"})
        return
    del code
    send(channel, {"ready": True})
    while True:
        try:
            request = recv(channel)
        except (EOFError, OSError, RefusedReply):
            return
        reply = {"id": request.get("id")}
        function = namespace.get(request["fn"])
        if not callable(function):
            reply.update(ok=False, error=MISSING_ENTRY_POINT, message=f"the completion defines no function {request['fn']!r}")
            send(channel, reply)
            continue
        try:
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
        except BaseException as exc:
            reply.update(ok=False, error=type(exc).__name__, message=str(exc)[:500])
            send(channel, reply)
            continue
        try:
            result = function(*args, **kwargs)
            reply.update(ok=True, value=encode(result), mutated=_mutated(request, args, kwargs))
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the call failed
            # A TypeError whose traceback never entered the function was raised binding the
            # arguments: the signature does not take what the test passes.
            at_call = isinstance(exc, TypeError) and exc.__traceback__ is not None and exc.__traceback__.tb_next is None
            reply.update(ok=False, error=type(exc).__name__, message=str(exc)[:500], at_call=at_call)
        send(channel, reply)


def _mutated(request, args, kwargs):
    """The mutable arguments the call changed, by position or name, as their values now."""
    changed = []
    sent_kwargs = {k: v for k, v in request["kwargs"]["dict"]}
    for where, value, sent in [*((i, a, request["args"][i]) for i, a in enumerate(args)),
                               *((k, v, sent_kwargs[k]) for k, v in kwargs.items())]:
        if type(value) in _MUTABLE:
            now = encode(value)
            if now != sent:
                changed.append([where, now])
    return changed


def _wipe(directory):
    """Empty `directory` whatever a completion did to it: locked folders are unlocked before they
    are read, and folders nested deeper than a few levels are moved up and emptied on a later pass,
    so depth costs neither recursion nor open descriptors."""
    try:
        os.chmod(directory, 0o700)  # where the completion owned it, it may have locked it too
    except OSError:
        pass
    top = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(100_000):
            if not _clear(top, top, 0):
                return
    finally:
        os.close(top)


_MOVED = [0]


def _clear(dir_fd, top_fd, depth):
    """Delete what is in `dir_fd`; True if a folder too deep was moved up to `top_fd` for another pass."""
    again = False
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return False
    for name in names:
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            if not stat.S_ISDIR(mode):
                os.unlink(name, dir_fd=dir_fd)
                continue
            if depth >= 8:
                _MOVED[0] += 1
                os.rename(name, f".wiped-{_MOVED[0]}", src_dir_fd=dir_fd, dst_dir_fd=top_fd)
                again = True
                continue
            os.chmod(name, 0o700, dir_fd=dir_fd)  # a completion may have locked it
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                again = _clear(fd, top_fd, depth + 1) or again
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=dir_fd)
        except OSError:
            continue
    return again


def _remove_ipc_objects():
    """Every SysV shared memory segment, message queue and semaphore set in this IPC namespace (the
    sandbox's own), and every POSIX message queue where /dev/mqueue shows them."""
    libc = _native()[1]
    for kind, remove in (("shm", lambda i: libc.shmctl(i, 0, None)), ("msg", lambda i: libc.msgctl(i, 0, None)),
                         ("sem", lambda i: libc.semctl(i, 0, 0))):  # IPC_RMID = 0
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 1 and fields[1].isdigit():
                remove(int(fields[1]))
    try:
        for name in os.listdir("/dev/mqueue"):
            try:
                os.unlink(os.path.join("/dev/mqueue", name))
            except OSError:
                pass
    except OSError:
        pass


def _kill_everything_else(child, scope, subreaper=False):
    """SIGKILL every process this sandbox's completion started, until none is left, then reap.
    In a namespace of its own (`scope` "namespace") that is kill(-1), which spares the caller and
    the namespace's init; unsandboxed on a shared host, only the child's process group. A
    `subreaper` zygote (in its own namespace) inherits every orphan, so it waits for each death
    instead of polling. Returns the child's wait status."""
    status = None
    wait_flags = 0 if subreaper else os.WNOHANG
    for _ in range(1000):
        try:
            if scope == "namespace":
                os.kill(-1, signal.SIGKILL)
            else:
                os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        while True:
            try:
                pid, wait_status = os.waitpid(-1, wait_flags)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == child:
                status = wait_status
        if not subreaper:
            time.sleep(0.001)
    while True:  # what is left are zombies of our own children
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            status = wait_status
    return status


def _can_make_namespaces(scratch):
    """Whether a completion's process can have namespaces of its own here (probed once, the way
    each completion's process is made)."""
    try:
        child = _fork_into_namespaces()
    except OSError:
        return False
    if child == 0:
        _mount_private(scratch, 4096)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


_WARM_UP = """
from typing import Dict, List, Optional, Tuple
import math


class _Point:
    x: int = 0


def _warm(numbers: List[float], threshold: float = 0.5, *args, key=None, **kwargs) -> Optional[Dict[str, Tuple[int, ...]]]:
    \"\"\" A docstring.
    >>> _warm([1.0], 0.5)
    \"\"\"
    seen = {n: i for i, n in enumerate(sorted(numbers, key=lambda v: -v)) if n > threshold}
    try:
        total = sum(x * x for x in numbers) + math.floor(threshold)
    except (ValueError, ZeroDivisionError) as exc:
        raise RuntimeError(f"bad {exc!r}") from exc
    while total > 1 and not seen:
        total //= 2
    return {str(k): (v,) for k, v in seen.items()} or None
"""
"""Typical completion code, compiled and run once by the zygote: a process's first compile sets up
the compiler (~0.8 ms); done before the fork, no completion's process pays for it."""


def _warm_compiler():
    exec(compile(_WARM_UP, "<warm-up>", "exec"), {"__name__": "warm_up"})


def zygote(control, scratch, scope, filter_path):
    for name in PRELOADED:
        __import__(name)
    subreaper = False
    try:  # not dumpable: a child of the same uid cannot ptrace it or write its memory through /proc
        libc = _native()[1]
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        # Alone in its pid namespace, the zygote adopts every orphan (as the sandbox's pid 1 it
        # would anyway; under an older bubblewrap's init it needs PR_SET_CHILD_SUBREAPER), so ending
        # a completion waits on each death rather than polling until that init reaps them (a
        # blocking wait is safe: kill(-1) reaches every process it waits for).
        subreaper = scope == "namespace" and libc.prctl(36, 1, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        pass
    try:
        with open(filter_path, "rb") as f:
            filter_program = f.read()
    except OSError:
        filter_program = b""
    confinement = Confinement(filter_program)
    private = _can_make_namespaces(scratch)
    _warm_compiler()
    gc.freeze()  # what the zygote holds now, a completion's collections never walk (nor copy, page by page)
    contained = isinstance(control, Stdio)
    send(control, {"ready": True, "pid": os.getpid(), "namespaces": private, "filter": confinement.filter,
                   "oom_kills": oom_kills() if contained else None})
    tmp_bytes = 64 << 20
    spare = _Spare.make(control, scratch, tmp_bytes, confinement) if private else None
    while True:
        try:
            message, fds = (recv(control), []) if contained else recv(control, with_fds=True)
        except (EOFError, OSError):
            return
        if contained and message.get("op") == "run":
            try:
                fds = _contained_descriptors(message)
            except OSError as exc:
                send(control, {"fork_error": f"no channel to the judge: {exc}"})
                continue
        if message.get("op") != "run" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        tmp_bytes = int(message.get("tmp_bytes", 64 << 20))
        child = spare.hand(fds, tmp_bytes) if spare is not None else None
        spare = None
        if child is None:
            try:
                child = _fork_into_namespaces() if private else os.fork()
            except OSError as exc:
                for fd in fds:
                    os.close(fd)
                send(control, {"fork_error": str(exc)})
                continue
            if child == 0:
                control.close()
                code = 1
                try:
                    os.setpgid(0, 0)
                    _child(fds, scratch, tmp_bytes, confinement, private)
                    code = 0
                finally:
                    os._exit(code)
        output_fd = os.dup(fds[2]) if contained else None
        for fd in fds:
            os.close(fd)
        send(control, {"forked": child})
        if private:  # the next completion's process is made while this one runs
            spare = _Spare.make(control, scratch, tmp_bytes, confinement)
        try:
            end = recv(control)
        except (EOFError, OSError):
            end = None
        if private:
            # With namespaces of its own a completion ends with its namespace's init (the spare lives
            # on). Killed, it runs no more code: the harness hears so at once, and the zygote reaps it
            # (the kernel tears its namespaces down, ~1 ms) while the harness turns to the next
            # completion, which it hands over only once that is done.
            _kill(child)
            if end is not None:
                send(control, {"ended": True, **({"output": tail(output_fd), "oom_kills": oom_kills()} if contained else {})})
            _reap(child)
            if end is None:
                return
            continue
        # without, everything in the sandbox but the zygote goes, and its leftovers with it
        status = _kill_everything_else(child, scope, subreaper)
        _wipe(scratch)
        if scope == "namespace":
            _remove_ipc_objects()
        if end is None:
            return
        report = {"ended": True}
        if status is not None:
            report["exit"] = os.waitstatus_to_exitcode(status)
        if contained:
            report.update(output=tail(output_fd), oom_kills=oom_kills())
        send(control, report)


def _contained_descriptors(message):
    """The child's three descriptors, made here: the channel to the judge (connected before any
    completion exists), a memfd with the code, a memfd for its output."""
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + 2.0
    while True:  # the judge got the job first, but may not be listening yet
        try:
            channel.connect(CHANNEL_PREFIX + str(message.get("nonce")))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                channel.close()
                raise
            time.sleep(0.001)
    code_fd, output_fd = os.memfd_create("completion"), os.memfd_create("output")
    os.write(code_fd, str(message.get("code", "")).encode("utf-8", errors="replace"))
    os.lseek(code_fd, 0, os.SEEK_SET)
    return [channel.detach(), code_fd, output_fd]


TAIL_BYTES = 2000
"""How much of the end of a completion's output is kept for its result."""


def tail(fd):
    """The end of what the completion wrote (its memfd), as text; the memfd is closed. Read by the
    harness where it holds the memfd, and by a container's zygote where the harness cannot."""
    try:
        return os.pread(fd, TAIL_BYTES, max(0, os.fstat(fd).st_size - TAIL_BYTES)).decode(errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


# --- judge ---

class _TestTimeout(BaseException):
    """Raised into a test when its deadline passes; recorded before raising, so a bare `except:`
    in the test cannot turn it into a pass."""


class _CompletionDied(BaseException):
    pass


class _Refused(BaseException):
    pass


BUILTIN_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                      if isinstance(obj, type) and issubclass(obj, BaseException)}


def _call(channel, state, entry_point, args, kwargs, deadline):
    if state["fault"]:  # once the completion timed out or died, every later call fails the same way
        raise _TestTimeout if state["fault"] == "timeout" else _CompletionDied
    state["next_id"] += 1
    try:
        request = {"id": state["next_id"], "fn": entry_point, "args": encode(list(args)), "kwargs": encode(kwargs)}
        send(channel, request)
        while True:
            reply = recv(channel, deadline, MAX_REPLY_BYTES)
            if reply.get("id") == state["next_id"]:  # anything else was written by the completion itself
                break
        if reply.get("ok") is True:
            value = decode(reply.get("value"), deadline)
            _copy_back(reply.get("mutated"), args, kwargs, deadline)
            return value
    except TimeoutError:
        state["fault"], state["detail"] = "timeout", None
        raise _TestTimeout from None
    except (EOFError, OSError):
        state["fault"], state["detail"] = "crashed", "the interpreter died"
        raise _CompletionDied from None
    except RefusedReply as exc:
        state["fault"], state["detail"] = "refused", f"the reply was refused: {exc}"
        raise _Refused from None
    name = str(reply.get("error"))[:100]
    error = BUILTIN_EXCEPTIONS.get(name, RuntimeError)
    if issubclass(error, (SystemExit, KeyboardInterrupt, GeneratorExit, StopIteration, StopAsyncIteration)):
        # the completion's exit must not end the judge, nor its StopIteration end a test's map/zip early
        error = RuntimeError
    raised = error(f"{name}: {reply.get('message')}")
    # How the call failed, for the test's detail (the verifier's failure codes read it). A forged
    # reply can change only this wording, never a verdict.
    if name == MISSING_ENTRY_POINT:
        state["raised"] = (raised, f"missing entry point: {str(reply.get('message'))[:200]}")
    elif reply.get("at_call") is True:
        state["raised"] = (raised, f"wrong signature: {name}: {str(reply.get('message'))[:200]}")
    else:
        state["raised"] = (raised, f"raised {name}: {str(reply.get('message'))[:200]}")
    raise raised


def _copy_back(mutated, args, kwargs, deadline):
    """The call ran in the completion's process on copies: what it changed in a list, dict, set or
    bytearray argument is made to the test's own object (as if the call had run here)."""
    if not isinstance(mutated, list):
        return
    for item in mutated:
        if not (isinstance(item, list) and len(item) == 2):
            raise RefusedReply("a malformed changed argument")
        where, value = item
        if type(where) is int and 0 <= where < len(args):
            update_in_place(args[where], decode(value, deadline))
        elif type(where) is str and where in kwargs:
            update_in_place(kwargs[where], decode(value, deadline))
        else:
            raise RefusedReply("a changed argument that was not passed")


@functools.lru_cache(maxsize=4096)
def _compiled_test(code):
    """Test code compiled once per judge (a problem's tests run for every completion of it); a test
    that does not compile raises its SyntaxError each time, as before (errors are not cached)."""
    return compile(code, "<test>", "exec")


def _judge_one(channel, state, entry_point, code, test_timeout, budget_end, budget_s):
    deadline = min(time.monotonic() + test_timeout, budget_end)
    over = f"over {test_timeout:g} s" if deadline < budget_end else f"over the completion's {budget_s:g} s for all its tests"
    state.pop("raised", None)

    def proxy(*args, **kwargs):
        return _call(channel, state, entry_point, args, kwargs, deadline)

    scope = {"__builtins__": builtins, entry_point: proxy}
    try:
        exec(_compiled_test(code), scope)
        error = None
    except BaseException as exc:  # noqa: anything a test raises is its verdict
        error = exc
    if state["fault"]:  # decided by what the proxy saw, whatever the test code caught
        status = state["fault"]
        detail = state["detail"] or over
        return False, "failed" if status == "refused" else status, detail
    if error is None:
        return True, "ok", ""
    if isinstance(error, Unencodable):
        return False, "failed", f"the test passed something that is not plain data: {error}"
    raised = state.pop("raised", None)
    if raised is not None and raised[0] is error:  # the completion's own exception ended the test
        status = "memory" if isinstance(error, MemoryError) else "output_limit" if "[Errno 27]" in raised[1] else "failed"
        return False, status, raised[1][:300]
    if isinstance(error, MemoryError):
        return False, "memory", "MemoryError"
    if isinstance(error, AssertionError):
        return False, "failed", str(error)[:300] or "assertion failed"
    detail = f"{type(error).__name__}: {error}"[:300]
    status = "memory" if "MemoryError" in detail else "output_limit" if "[Errno 27]" in detail else "failed"
    return False, status, detail


def judge(control):
    contained = isinstance(control, Stdio)
    send(control, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            job, fds = (recv(control), []) if contained else recv(control, with_fds=True)
        except (EOFError, OSError):
            return
        if contained:
            fds = _accept_channel(str(job.get("nonce")), job.get("zygote_uid"),
                                  time.monotonic() + min(job["load_timeout_s"], job["budget_left_s"]))
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            if contained:
                send(control, {"load": "crashed"})
            continue
        channel = socket.socket(fileno=fds[0])
        budget_s = job["completion_timeout_s"]
        budget_end = time.monotonic() + job["budget_left_s"]  # loading and every test, together
        try:
            try:
                hello = recv(channel, min(time.monotonic() + job["load_timeout_s"], budget_end), MAX_REPLY_BYTES)
            except TimeoutError:
                send(control, {"load": "timeout"})
                continue
            except (EOFError, OSError, RefusedReply):
                send(control, {"load": "crashed"})
                continue
            if "load_error" in hello:
                send(control, {"load": "load_error", "detail": str(hello["load_error"])[:600]})
                continue
            send(control, {"load": "ok"})
            state = {"fault": None, "detail": None, "next_id": 0}
            for test_id, code in job["tests"]:
                passed, status, detail = _judge_one(channel, state, job["entry_point"], code, job["test_timeout_s"],
                                                    budget_end, budget_s)
                send(control, {"test": test_id, "passed": passed, "status": status, "detail": detail})
                if state["fault"]:
                    break
            send(control, {"done": True})
        finally:
            channel.close()


def _accept_channel(nonce, zygote_uid, deadline):
    """The zygote's connection for this run: the first one from its uid. The listener closes as
    soon as it is accepted, so the completion (which could know the name) finds nobody listening."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(CHANNEL_PREFIX + nonce)
        listener.listen(1)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            listener.settimeout(remaining)
            try:
                connection, _ = listener.accept()
            except (socket.timeout, OSError):
                return []
            _, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                  struct.calcsize("3i")))
            if uid == zygote_uid:
                connection.settimeout(None)
                return [connection.detach()]
            connection.close()
    finally:
        listener.close()


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    role, spec, scratch, scope = sys.argv[1:5]
    # `stdio`: a container's attach stream (nothing else crosses to a remote daemon); else an inherited socket
    control = Stdio() if spec == "stdio" else socket.socket(fileno=int(spec))
    if role == "zygote":
        zygote(control, scratch, scope, os.path.join(os.path.dirname(os.path.abspath(__file__)), CHILD_FILTER))
    else:
        judge(control)
    os._exit(0)  # the harness hung up: nothing to flush, and skipping finalisation stops a slot ~10 ms sooner
