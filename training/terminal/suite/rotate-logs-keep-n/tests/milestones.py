"""The built-in suite's shared checker: every task's `tests/check.py` names its milestones and
calls `finish`, which scores them and then, as the judge's last step, stops every other process,
removes both reward files and writes the verdict. `run` runs a program of the agent's: where the
harness offers it (`$CURRICULAB_RUN`, curriculab's episodes), in a sandbox of its own that never
sees /tests or /logs; elsewhere (a foreign harness) here, with the verifier's uid, where it may
have written a reward, made it read-only or left a watcher to rewrite it: none of that survives
the final step. Each task carries a copy as `tests/milestones.py` (a Harbor task directory is
self-contained); `tests/training/test_terminal_suite.py` keeps every copy identical to this file,
and `python -m curriculab.training.terminal.suite.milestones` rewrites them."""

import base64
import json
import locale
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

APP = Path("/app")
LOGS = Path("/logs/verifier")
SIBLING = os.environ.get("CURRICULAB_RUN")
"""The harness's socket for the agent's programs (curriculab.training.terminal.sibling), if any."""


def read(name):
    try:
        return (APP / name).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def run(*args, stdin=None, timeout=20):
    """Run a program of the agent's from /app, as `subprocess.run(args, capture_output=True,
    text=True)` would: in a sandbox of the harness's where one answers, else here."""
    if not SIBLING:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=APP, input=stdin)
    data = (stdin or "").encode()
    request = json.dumps(
        {"argv": list(args), "cwd": str(APP), "stdin": base64.b64encode(data).decode(), "timeout": timeout}
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as harness:
        try:
            harness.connect(SIBLING)
            harness.sendall(len(request).to_bytes(4, "big") + request)
            reply = json.loads(_exactly(harness, int.from_bytes(_exactly(harness, 4), "big")))
        except (OSError, ValueError) as exc:  # never a direct run: the harness said it would run them
            raise SystemExit(f"the harness's sandbox for the agent's programs did not answer: {exc}") from None
    if "error" in reply:
        raise SystemExit(f"the harness could not run {args[0]}: {reply['error']}")
    if "oserror" in reply:  # as subprocess.run raises it: a program that is missing or not executable
        raise OSError(*reply["oserror"])
    if reply["timed_out"]:
        raise subprocess.TimeoutExpired(args, timeout)
    out, err = (_text(base64.b64decode(reply[name])) for name in ("stdout", "stderr"))
    return subprocess.CompletedProcess(args, reply["returncode"], out, err)


def _exactly(connection, size):
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ValueError("the harness hung up")
        data += chunk
    return data


def _text(data):
    """As `text=True` decodes a child's output: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def score(milestones):
    results = {}
    for name, check in milestones.items():
        try:
            results[name] = 1 if check() else 0
        except Exception:  # a broken deliverable fails its milestone, never the verifier
            results[name] = 0
    return results


def _lineage():
    """This process and its ancestors inside the pid namespace (test.sh, the namespace's init)."""
    keep, pid = set(), os.getpid()
    while pid > 0 and pid not in keep:
        keep.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as info:
                pid = int(info.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return keep


def _alive(pid):
    """Whether any thread of `pid` still runs: a leader that ended only its own thread (SYS_exit, not
    exit_group) reads Z in /proc/PID/stat while its other threads go on."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as info:
                if info.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X"):
                    return True
        except (OSError, IndexError):
            continue
    return False


def _others(keep):
    """Live processes of this uid but those in `keep` (another uid's, such as a container's root
    init, cannot be signalled and never ran the agent's code)."""
    uid, found = os.getuid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in keep:
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
            except OSError:
                continue
            if _alive(entry):
                found.append(int(entry))
    return found


def stop_others():
    """Kill every other live process of this uid (the agent's programs the checks started, and
    anything they left behind: a thread group whose leader is a zombie included; SIGKILL to its pid
    ends every thread), until none is left; SystemExit if some cannot be stopped."""
    keep = _lineage()
    for _ in range(200):
        left = _others(keep)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                continue
        time.sleep(0.005)
    left = _others(keep)
    if left:
        for name in ("reward.json", "reward.txt"):
            try:
                _remove(LOGS / name)
            except OSError:
                pass
        raise SystemExit(
            f"the judge's final step could not stop {len(left)} process(es) the checks left "
            f"(pids {', '.join(map(str, left[:10]))}): no verdict is written"
        )


def _remove(path):
    if path.is_dir() and not path.is_symlink():
        for inner in [path, *path.rglob("*")]:
            if inner.is_dir() and not inner.is_symlink():
                inner.chmod(stat.S_IRWXU)
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def finish(milestones):
    """Score `milestones` (name: check), then write them as the only verdict."""
    results = score(milestones)
    stop_others()  # returns only once nothing but this process and its ancestors is left
    LOGS.chmod(0o755)  # a program of the agent's may have taken the folder's write bit
    for name in ("reward.json", "reward.txt"):
        _remove(LOGS / name)
    fd = os.open(LOGS / "reward.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as verdict:
        json.dump(results, verdict)


def _sync_copies():
    """Rewrite every task's tests/milestones.py from this file (run after editing it)."""
    here = Path(__file__).resolve()
    text = here.read_text()
    for check in sorted(here.parent.glob("*/tests/check.py")) + sorted(here.parent.glob("*/steps/*/tests/check.py")):
        (check.parent / "milestones.py").write_text(text)
        print(check.parent / "milestones.py", file=sys.stderr)


if __name__ == "__main__":
    _sync_copies()
