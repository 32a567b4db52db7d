"""The built-in suite's shared checker: every task's `tests/check.py` names its milestones and
calls `finish`, which scores them and then, as the judge's last step, stops every other process,
removes both reward files and writes the verdict. The agent's programs the checks run (with the
verifier's uid) may have written a reward, made it read-only or left a watcher to rewrite it:
none of that survives this step. Each task carries a copy as `tests/milestones.py` (a Harbor task
directory is self-contained); `tests/training/test_terminal_suite.py` keeps every copy identical
to this file, and `python -m curriculab.training.terminal.suite.milestones` rewrites them."""

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

APP = Path("/app")
LOGS = Path("/logs/verifier")


def read(name):
    try:
        return (APP / name).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def run(*args, stdin=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=20, cwd=APP, input=stdin)


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
