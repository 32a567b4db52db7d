"""The code that runs inside the sandboxes (stdlib only; the system /usr/bin/python3 with -I -S).

Two roles, each a long-lived process in its own sandbox, each as its own uid:

- `zygote`: a clean interpreter with common modules pre-imported that never runs model code. For
  each completion it forks a child, which loads the completion and serves calls on a socket it
  was handed; when the harness ends the completion, the zygote kills every other process in its
  sandbox, reaps them, reports how the child ended and empties the scratch directory. Isolation
  between completions is therefore a fresh process each, on a clean copy of the zygote.
- `judge`: runs a problem's tests. Each test's `assert`s run here, with the entry point bound to a
  proxy that calls into the completion's child over its socket; replies are untrusted data, bounded
  before they are parsed and decoded against the test's deadline. Tests may come from a user's
  problems file, so they run sandboxed too, never in the harness.

Values cross strictly: only exact builtin types, so an object with an always-true `__eq__`
cannot. Nothing the completion does (exiting, printing, patching builtins, writing to any file
descriptor) reaches a verdict: the child only ever answers calls.
"""

import builtins
import json
import math
import os
import signal
import socket
import struct
import sys
import time

MAX_MESSAGE = 16 * 1024 * 1024
MAX_REPLY_BYTES = 4 * 1024 * 1024
"""Largest reply the judge reads from a completion."""
MAX_REPLY_NODES = 200_000
"""Most containers (lists, dicts) a reply may hold."""
MAX_HASHED = 10_000
"""Largest set or dict built from a reply: hashing untrusted values (all colliding, say) is quadratic."""
OUTPUT_FILE = ".output"
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
    if t is int:
        return value if -(2 ** 53) < value < 2 ** 53 else {"int": str(value)}
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
    if t is bytes:
        return {"bytes": value.hex()}
    if t is complex:
        return {"complex": [value.real, value.imag]}
    raise Unencodable(f"{t.__module__}.{t.__qualname__} is not plain data")


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
        if tag in ("set", "frozenset", "dict") and len(body) > MAX_HASHED:
            raise RefusedReply(f"a {tag} of {len(body):,} items (at most {MAX_HASHED:,} are built)")
        if tag == "int":
            return int(body)
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
        if tag == "complex":
            return complex(*body)
        raise RefusedReply(f"unknown tag {tag!r}")
    return value


# --- framing: 4-byte length + JSON, on stream sockets; a file descriptor may ride along ---

def send(sock, message, fd=None):
    data = json.dumps(message).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({"id": message.get("id"), "ok": False, "error": "OverflowError",
                           "message": "return value too large"}).encode()
    payload = struct.pack(">I", len(data)) + data
    if fd is not None:
        sent = socket.send_fds(sock, [payload], [fd])
        payload = payload[sent:]
    if payload:
        sock.sendall(payload)


def _recv_exact(sock, n, deadline, fds):
    chunks = b""
    while len(chunks) < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
        try:
            if fds is not None and not fds:
                chunk, received, _, _ = socket.recv_fds(sock, n - len(chunks), 1)
                fds.extend(received)
            else:
                chunk = sock.recv(n - len(chunks))
        except socket.timeout:
            raise TimeoutError from None
        if not chunk:
            raise EOFError
        chunks += chunk
    return chunks


def recv(sock, deadline=None, limit=MAX_MESSAGE, with_fd=False):
    """One message (and the descriptor sent with it, when `with_fd`)."""
    fds = [] if with_fd else None
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
    return (message, fds[0] if fds else None) if with_fd else message


# --- zygote ---

def _wipe(directory):
    for root, dirs, files in os.walk(directory, topdown=False):
        for name in files + dirs:
            path = os.path.join(root, name)
            is_dir = name in dirs and not os.path.islink(path)
            try:
                if is_dir:
                    os.chmod(path, 0o700)  # a completion may have locked it
                (os.rmdir if is_dir else os.unlink)(path)
            except OSError:
                pass


def _kill_everything_else(child):
    """SIGKILL every process this uid may signal (kill(-1) spares the caller and the namespace's
    init), until none is left, then reap. Returns the child's wait status."""
    status = None
    for _ in range(1000):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break
        except PermissionError:
            break
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == child:
                status = wait_status
        time.sleep(0.001)
    while True:  # what is left are zombies of our own children
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            status = wait_status
    return status


def _child(channel_fd, code, scratch):
    global CHANNEL
    channel = socket.socket(fileno=channel_fd)
    CHANNEL = channel
    out = os.open(os.path.join(scratch, OUTPUT_FILE), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
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
            reply.update(ok=True, value=encode(result))
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the call failed
            # A TypeError whose traceback never entered the function was raised binding the
            # arguments: the signature does not take what the test passes.
            at_call = isinstance(exc, TypeError) and exc.__traceback__ is not None and exc.__traceback__.tb_next is None
            reply.update(ok=False, error=type(exc).__name__, message=str(exc)[:500], at_call=at_call)
        send(channel, reply)


def zygote(control, scratch):
    for name in PRELOADED:
        __import__(name)
    try:  # not dumpable: a child of the same uid cannot ptrace it or write its memory through /proc
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (ImportError, OSError, AttributeError):
        pass
    send(control, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            message, fd = recv(control, with_fd=True)
        except (EOFError, OSError):
            return
        if message.get("op") != "run" or fd is None:
            continue
        try:
            child = os.fork()
        except OSError as exc:
            os.close(fd)
            send(control, {"fork_error": str(exc)})
            continue
        if child == 0:
            control.close()
            code = 1
            try:
                _child(fd, message["code"], scratch)
                code = 0
            finally:
                os._exit(code)
        os.close(fd)
        send(control, {"forked": child})
        try:
            end = recv(control)
        except (EOFError, OSError):
            end = None
        status = _kill_everything_else(child)
        tail = b""
        try:
            with open(os.path.join(scratch, OUTPUT_FILE), "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 2000))
                tail = f.read()
        except OSError:
            pass
        _wipe(scratch)
        if end is None:
            return
        report = {"ended": True, "output_tail": tail.decode(errors="replace")}
        if status is not None:
            report["exit"] = os.waitstatus_to_exitcode(status)
        send(control, report)


# --- judge ---

class _TestTimeout(BaseException):
    """Raised into a test when its deadline passes; recorded before raising, so a bare `except:`
    in the test cannot turn it into a pass."""


class _CompletionDied(BaseException):
    pass


class _Refused(BaseException):
    pass


STOPPING = {"timeout", "crashed", "refused"}
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
            return decode(reply.get("value"), deadline)
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


def _judge_one(channel, state, entry_point, code, test_timeout):
    deadline = time.monotonic() + test_timeout
    state.pop("raised", None)

    def proxy(*args, **kwargs):
        return _call(channel, state, entry_point, args, kwargs, deadline)

    scope = {"__builtins__": builtins, entry_point: proxy}
    try:
        exec(compile(code, "<test>", "exec"), scope)
        error = None
    except BaseException as exc:  # noqa: anything a test raises is its verdict
        error = exc
    if state["fault"]:  # decided by what the proxy saw, whatever the test code caught
        status = state["fault"]
        detail = state["detail"] or f"over {test_timeout:g} s"
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
    send(control, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            job, fd = recv(control, with_fd=True)
        except (EOFError, OSError):
            return
        if fd is None:
            continue
        channel = socket.socket(fileno=fd)
        try:
            try:
                hello = recv(channel, time.monotonic() + job["load_timeout_s"], MAX_REPLY_BYTES)
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
                passed, status, detail = _judge_one(channel, state, job["entry_point"], code, job["test_timeout_s"])
                send(control, {"test": test_id, "passed": passed, "status": status, "detail": detail})
                if state["fault"]:
                    break
            send(control, {"done": True})
        finally:
            channel.close()


def _connect(spec):
    if spec.startswith("unix:"):  # containers cannot inherit descriptors: connect back over a socket
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(spec[len("unix:"):])
        return sock
    return socket.socket(fileno=int(spec))


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    role, spec = sys.argv[1], sys.argv[2]
    scratch = sys.argv[3] if len(sys.argv) > 3 else "/tmp"
    control = _connect(spec)
    if role == "zygote":
        zygote(control, scratch)
    else:
        judge(control)
