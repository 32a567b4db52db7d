"""Host-side pieces of isolation: a uid per sandbox, a cgroup per sandbox where cgroups are
writable, and a seccomp filter for bubblewrap."""

from __future__ import annotations

import fcntl
import os
import platform
import struct
from pathlib import Path

UID_BASE = 61000
UID_COUNT = 2000
LOCK_DIR = Path("/tmp/curriculab-uids")


class UidLease:
    """A uid no other sandbox (in this process or any other on the host) uses while it is held:
    RLIMIT_NPROC counts every process of a uid, so a shared uid lets one fork bomb starve its
    neighbours. Leases are flock()ed files, released when closed or when the process dies."""

    def __init__(self) -> None:
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            fd = os.open(LOCK_DIR / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError(f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use (locks in {LOCK_DIR})")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Cgroup:
    """A cgroup capping one sandbox's total memory and process count (v2, else v1), or None where
    no cgroup hierarchy is writable here."""

    def __init__(self, paths: list[Path], version: int):
        self.paths, self.version = paths, version

    @classmethod
    def create(cls, name: str, memory_bytes: int, processes: int) -> "Cgroup | None":
        return cls._v2(name, memory_bytes, processes) or cls._v1(name, memory_bytes, processes)

    @classmethod
    def _v2(cls, name: str, memory_bytes: int, processes: int) -> "Cgroup | None":
        root = Path("/sys/fs/cgroup")
        if not (root / "cgroup.controllers").exists():
            return None
        own = next((line[3:].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                    if line.startswith("0::")), None)
        if own is None:
            return None
        parent = root / own.lstrip("/")
        path = parent / name
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            (path / "memory.max").write_text(str(memory_bytes))
            if (path / "memory.swap.max").exists():
                (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(processes))
            return cls([path], 2)
        except OSError:  # controllers not delegated to this subtree
            path.rmdir()
            return None

    @classmethod
    def _v1(cls, name: str, memory_bytes: int, processes: int) -> "Cgroup | None":
        memory, pids = Path("/sys/fs/cgroup/memory") / name, Path("/sys/fs/cgroup/pids") / name
        made = []
        try:
            for path in (memory, pids):
                path.mkdir()
                made.append(path)
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            (pids / "pids.max").write_text(str(processes))
            return cls(made, 1)
        except OSError:
            for path in made:
                try:
                    path.rmdir()
                except OSError:
                    pass
            return None

    @classmethod
    def of_process(cls, pid: int) -> "Cgroup | None":
        """The memory cgroup another tool (Docker) put `pid` in, to read its OOM kills."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                return cls([Path("/sys/fs/cgroup/memory") / path.lstrip("/")], 1)
            if controllers == "" and (Path("/sys/fs/cgroup") / "cgroup.controllers").exists():
                return cls([Path("/sys/fs/cgroup") / path.lstrip("/")], 2)
        return None

    def enter_command(self) -> list[str]:
        """A prefix that moves the command into this cgroup before it runs (so all it forks is inside)."""
        script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *[str(p / "cgroup.procs") for p in self.paths], "--"]

    def oom_kills(self) -> int:
        """How many processes the kernel killed at the memory cap so far."""
        for path in self.paths:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    for line in (path / name).read_text().splitlines():
                        if line.startswith("oom_kill "):
                            return int(line.split()[1])
                except OSError:
                    continue
        return 0

    def remove(self) -> None:
        for path in self.paths:
            try:
                path.rmdir()
            except OSError:
                pass


# Syscalls a completion never needs and a jailbreak often does.
_DENIED = {
    "x86_64": {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165, "umount2": 166,
               "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "keyctl": 250, "add_key": 248,
               "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246,
               "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "swapon": 167,
               "swapoff": 168, "reboot": 169, "open_by_handle_at": 304, "name_to_handle_at": 303, "acct": 163,
               "quotactl": 179, "syslog": 103},
    "aarch64": {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40, "umount2": 39,
                "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "keyctl": 219, "add_key": 217,
                "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104,
                "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106, "swapon": 224,
                "swapoff": 225, "reboot": 142, "open_by_handle_at": 265, "name_to_handle_at": 264, "acct": 89,
                "quotactl": 60, "syslog": 116},
}
# Same number on every architecture (added after the tables were unified).
_DENIED_COMMON = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
                  "mount_setattr": 442, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
_CLONE3 = 435  # answered ENOSYS, so libc falls back to clone(), whose flags a filter can read
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
DENIED_SYSCALLS = sorted(set(_DENIED["x86_64"]) | set(_DENIED_COMMON))


def seccomp_program() -> bytes | None:
    """A classic-BPF seccomp filter (as bubblewrap's `--seccomp FD` reads it): the syscalls above
    fail with EPERM, clone3 with ENOSYS, a foreign architecture or the x32 ABI is killed. None on
    an architecture without a table here."""
    arch = platform.machine()
    if arch not in _DENIED:
        return None
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    allow, kill, errno = 0x7FFF0000, 0x80000000, 0x00050000
    numbers = sorted(set(_DENIED[arch].values()) | set(_DENIED_COMMON.values()))
    program = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq_k, 1, 0, _AUDIT_ARCH[arch]),
        (ret_k, 0, 0, kill),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == "x86_64":
        program += [(jge_k, 0, 1, 0x40000000), (ret_k, 0, 0, kill)]  # the x32 ABI would bypass the numbers
    program += [(jeq_k, 0, 1, _CLONE3), (ret_k, 0, 0, errno | 38)]  # ENOSYS
    for index, number in enumerate(numbers):
        remaining = len(numbers) - index - 1
        program.append((jeq_k, remaining + 1, 0, number))  # match: jump past the rest and `allow` to EPERM
    program += [(ret_k, 0, 0, allow), (ret_k, 0, 0, errno | 1)]
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in program)


def docker_seccomp_profile() -> dict:
    """The same rules as Docker's seccomp JSON (it replaces Docker's default profile; with every
    capability dropped, the syscalls that default adds beyond these need capabilities anyway)."""
    names = sorted({name for table in _DENIED.values() for name in table} | set(_DENIED_COMMON))
    return {"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
                         {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}
