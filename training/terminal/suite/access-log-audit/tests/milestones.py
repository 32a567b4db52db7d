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


def stop_others():
    """Kill every other live process this uid may signal (the agent's programs the checks started,
    and anything they left behind), until none is left."""
    keep = _lineage()
    for _ in range(200):
        killed = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in keep:
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as info:
                    if info.read().rpartition(b")")[2].split()[0] in (b"Z", b"X"):
                        continue
                os.kill(int(entry), 9)
                killed += 1
            except (OSError, IndexError):
                continue
        if not killed:
            return
        time.sleep(0.005)
    raise SystemExit("could not stop the processes the checks left")


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
    stop_others()
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
