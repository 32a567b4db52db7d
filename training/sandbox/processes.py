"""The host side of a sandbox's processes, one set for both sandboxes (completions, `runner.py`;
episodes, `training/terminal/episode.py`): procfs read for a process's children, its descendants and
a uid's processes; signals that ignore a process already gone; a wait woken by the exit itself; and
a namespace ended through its init."""

from __future__ import annotations

import os
import select
import subprocess


def children(pid: int) -> list[int]:
    """The live children of a single-threaded process of ours (none where procfs cannot say)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            return [int(child) for child in listing.read().split()]
    except (OSError, ValueError):
        return []


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, children of any of its threads included, parents first."""
    out, stack = [], [pid]
    while stack:
        current = stack.pop()
        try:
            tids = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as listing:
                    found = [int(c) for c in listing.read().split()]
            except (OSError, ValueError):
                continue
            out += found
            stack += found
    return out


def alive(pid: int) -> bool:
    """Whether any thread of `pid` still runs: a thread-group leader that ended only its own thread
    (SYS_exit, not exit_group) reads Z in /proc/PID/stat while its other threads go on."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as stat:
                if stat.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X"):
                    return True
        except (OSError, IndexError):
            continue
    return False


def uid_processes(uid: int) -> list[int]:
    """Processes of `uid` with a live thread (SIGKILL to the pid ends the whole thread group)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
            except OSError:
                continue
            if alive(int(entry)):
                pids.append(int(entry))
    return pids


def signal(pid: int, number: int) -> None:
    """Send `number` to `pid`, which may have exited meanwhile."""
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def kill(*pids: int) -> None:
    """SIGKILL each of `pids` (those gone already are skipped)."""
    for pid in pids:
        signal(pid, 9)


def wait(process: subprocess.Popen[bytes], timeout: float) -> None:
    """`process.wait(timeout)`, woken by the exit itself (a pidfd) where Popen polls with sleeps that
    double: a server's exit was seen well after it happened."""
    if process.returncode is not None:
        return
    try:
        pidfd = os.pidfd_open(process.pid)  # unreaped until waited for here, so the pid is still its own
    except (AttributeError, OSError):  # no pidfds (before Linux 5.3)
        process.wait(timeout=timeout)
        return
    try:
        if not select.select([pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(process.args, timeout)
    finally:
        os.close(pidfd)
    process.wait()


def end_namespace(process: subprocess.Popen[bytes]) -> None:
    """End a sandbox by killing its namespace's init (bubblewrap's child): the kernel then kills
    everything in the namespace and that init reaps it all, so nothing is left to whoever adopts
    orphans (a container's pid 1 may never reap). Its bubblewrap parent then exits and is reaped."""
    if process.poll() is None:
        kill(*descendants(process.pid)[:1])
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            kill(process.pid)
            process.wait()
