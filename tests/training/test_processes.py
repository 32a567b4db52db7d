"""The host side of a sandbox's processes (`training/sandbox/processes.py`): a process counts as
alive while any of its threads runs, so a thread-group leader that ended only its own thread is
still found, and killed, by `uid_processes`."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from curriculab.training.sandbox import processes

# The main thread ends alone (SYS_exit, not exit_group): the leader reads Z, the other thread runs on.
LEADER_EXITS_ALONE = """
import ctypes, platform, threading, time
threading.Thread(target=time.sleep, args=(30,)).start()
print("ready", flush=True)
ctypes.CDLL(None).syscall(93 if platform.machine() == "aarch64" else 60, 0)
"""


def _state(pid: int) -> bytes:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()[0]


def test_a_zombie_leader_with_a_live_thread_counts_as_alive_and_is_killed():
    child = subprocess.Popen([sys.executable, "-c", LEADER_EXITS_ALONE], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 5
        while _state(child.pid) != b"Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(child.pid) == b"Z"  # what the old check read, and skipped
        assert processes.alive(child.pid)
        assert child.pid in processes.uid_processes(os.getuid())
        processes.kill(child.pid)  # SIGKILL to the pid ends the whole thread group
        child.wait(timeout=5)
        assert not processes.alive(child.pid)
    finally:
        child.kill()
        child.wait()
