"""Host-side pieces of isolation: a uid per sandbox, a cgroup per sandbox where cgroups are
writable, a seccomp filter for bubblewrap, and bubblewrap's one command line (`bwrap_command`)."""

from __future__ import annotations

import fcntl
import os
import platform
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

UID_BASE = 61000
UID_COUNT = 2000


def lease_directory() -> Path:
    """Where uid leases are locked: `$XDG_RUNTIME_DIR`, else `/run` (root), else `$TMPDIR`, in a
    folder named for the user, so a read-only `/tmp` or another user's leases never get in the way."""
    name = f"curriculab-uids-{os.geteuid()}"
    candidates = [os.environ.get("XDG_RUNTIME_DIR"), "/run" if os.geteuid() == 0 else None, tempfile.gettempdir()]
    for base in filter(None, candidates):
        if os.access(base, os.W_OK | os.X_OK) or (Path(base) / name).is_dir():
            return Path(base) / name
    raise RuntimeError(
        f"no writable place for sandbox uid leases (tried {', '.join(filter(None, candidates))}). "
        "Set XDG_RUNTIME_DIR or TMPDIR to a writable directory"
    )


class UidLease:
    """A uid no other sandbox (in this process or any other on the host) uses while it is held:
    RLIMIT_NPROC counts every process of a uid, so a shared uid lets one fork bomb starve its
    neighbours. Leases are flock()ed files, released when closed or when the process dies. Only
    root can run a sandbox as another uid; anyone else's sandboxes run as themselves, unleased."""

    def __init__(self) -> None:
        self._fd = None
        if os.geteuid() != 0:
            self.uid = os.geteuid()
            return
        directory = lease_directory()
        directory.mkdir(mode=0o700, exist_ok=True)
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError(f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use (locks in {directory})")

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
    def create(cls, name: str, memory_bytes: int, processes: int) -> Cgroup | None:
        return cls._v2(name, memory_bytes, processes) or cls._v1(name, memory_bytes, processes)

    @classmethod
    def _v2(cls, name: str, memory_bytes: int, processes: int) -> Cgroup | None:
        root = Path("/sys/fs/cgroup")
        if not (root / "cgroup.controllers").exists():
            return None
        own = next(
            (line[3:].strip() for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::")),
            None,
        )
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
    def _v1(cls, name: str, memory_bytes: int, processes: int) -> Cgroup | None:
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
    def of_process(cls, pid: int) -> Cgroup | None:
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


# Syscalls a completion never needs and a jailbreak often does. SysV IPC objects are refused too:
# they outlive the process that made them and their memory escapes RLIMIT_AS (per-completion IPC
# namespaces stay as the second wall).
_DENIED = {
    "x86_64": {
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "chroot": 161,
        "unshare": 272,
        "setns": 308,
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
        "bpf": 321,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "kexec_load": 246,
        "kexec_file_load": 320,
        "init_module": 175,
        "finit_module": 313,
        "delete_module": 176,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "open_by_handle_at": 304,
        "name_to_handle_at": 303,
        "acct": 163,
        "quotactl": 179,
        "syslog": 103,
        "shmget": 29,
        "semget": 64,
        "msgget": 68,
    },
    "aarch64": {
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "mount": 40,
        "umount2": 39,
        "pivot_root": 41,
        "chroot": 51,
        "unshare": 97,
        "setns": 268,
        "keyctl": 219,
        "add_key": 217,
        "request_key": 218,
        "bpf": 280,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "kexec_load": 104,
        "kexec_file_load": 294,
        "init_module": 105,
        "finit_module": 273,
        "delete_module": 106,
        "swapon": 224,
        "swapoff": 225,
        "reboot": 142,
        "open_by_handle_at": 265,
        "name_to_handle_at": 264,
        "acct": 89,
        "quotactl": 60,
        "syslog": 116,
        "shmget": 194,
        "semget": 190,
        "msgget": 186,
    },
}
# Same number on every architecture (added after the tables were unified).
_DENIED_COMMON = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
ZYGOTE_ALLOWED = ("mount",)
"""What the zygote's own filter allows beyond a completion's: each completion's process is cloned
into fresh namespaces (clone is not denied; its namespace flags need the capability only the
zygote has) and mounts its /tmp and /proc before it installs the full filter and drops its
capabilities. The zygote never runs model code, and it may not unshare."""
_SOCKET_CALLS = {"x86_64": {"socket": 41, "socketpair": 53}, "aarch64": {"socket": 198, "socketpair": 199}}
SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10}
"""The only socket families a sandbox may open (IP only inside its empty network namespace). Any
other (AF_VSOCK, AF_NETLINK, AF_PACKET, AF_BLUETOOTH, …) fails with EPERM: a network namespace
does not isolate them all (vsock reaches the hypervisor)."""
_CLONE3 = 435  # answered ENOSYS, so libc falls back to clone(), whose flags a filter can read
_CLONE = {"x86_64": 56, "aarch64": 220}
CLONE_NAMESPACES = 0x10000000 | 0x00020000 | 0x08000000 | 0x20000000 | 0x40000000 | 0x04000000 | 0x02000000
"""clone() flags that make namespaces (user, mount, IPC, pid, network, UTS, cgroup): refused to a
completion (a user namespace of its own would hold every capability, raw sockets included)."""
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def seccomp_program(allow: tuple[str, ...] = ()) -> bytes | None:
    """A classic-BPF seccomp filter (as bubblewrap's `--seccomp FD` and `PR_SET_SECCOMP` read it):
    the syscalls above (less `allow`) fail with EPERM, sockets outside `SOCKET_FAMILIES` with EPERM,
    clone3 with ENOSYS, a foreign architecture or the x32 ABI is killed. None on an architecture
    without a table here."""
    arch = platform.machine()
    if arch not in _DENIED:
        return None
    ld_w_abs, jeq_k, jge_k, jset_k, ret_k = 0x20, 0x15, 0x35, 0x45, 0x06
    allow_all, kill, errno = 0x7FFF0000, 0x80000000, 0x00050000
    denied = sorted({n for name, n in _DENIED[arch].items() if name not in allow} | set(_DENIED_COMMON.values()))
    # (code, jump-if-true label, jump-if-false label, k); labels resolve to relative offsets below
    program: list[tuple[int, str | int, str | int, int]] = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq_k, 1, 0, _AUDIT_ARCH[arch]),
        (ret_k, 0, 0, kill),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == "x86_64":
        program += [(jge_k, "kill", 0, 0x40000000)]  # the x32 ABI would bypass the numbers
    program += [(jeq_k, "enosys", 0, _CLONE3)]
    program += [(jeq_k, "family", 0, number) for number in _SOCKET_CALLS[arch].values()]
    namespaces = "mount" not in allow  # the zygote (which may mount) makes namespaces; a completion may not
    if namespaces:
        program += [(jeq_k, "clone", 0, _CLONE[arch])]
    program += [(jeq_k, "eperm", 0, number) for number in denied]
    labels = {
        "eperm": len(program) + 1,
        "enosys": len(program) + 2,
        "kill": len(program) + 3,
        "family": len(program) + 4,
    }
    program += [
        (ret_k, 0, 0, allow_all),
        (ret_k, 0, 0, errno | 1),
        (ret_k, 0, 0, errno | 38),
        (ret_k, 0, 0, kill),
        (ld_w_abs, 0, 0, 16),
    ]  # seccomp_data.args[0], low half: the socket family
    labels["family_allowed"] = len(program) + len(SOCKET_FAMILIES) + 1
    program += [(jeq_k, "family_allowed", 0, family) for family in SOCKET_FAMILIES.values()]
    program += [(ret_k, 0, 0, errno | 1), (ret_k, 0, 0, allow_all)]  # jumps only go forward: a second `allow`
    if namespaces:  # clone's flags (args[0], low half) with any namespace bit: EPERM
        labels["clone"] = len(program)
        program += [
            (ld_w_abs, 0, 0, 16),
            (jset_k, 0, 1, CLONE_NAMESPACES),
            (ret_k, 0, 0, errno | 1),
            (ret_k, 0, 0, allow_all),
        ]

    def offset(index: int, target: str | int) -> int:
        return target if isinstance(target, int) else labels[target] - index - 1

    return b"".join(
        struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k) for i, (code, jt, jf, k) in enumerate(program)
    )


def docker_seccomp_profile(zygote: bool = False) -> dict[str, Any]:
    """The same rules as Docker's seccomp JSON (it replaces Docker's default profile; with every
    capability dropped, the syscalls that default adds beyond these need capabilities anyway). A
    `zygote`'s container may also mount and clone into namespaces: with no capability it makes each
    completion's process a user namespace of its own to mount that process's /tmp, /dev/shm and
    /proc, and the process installs the full filter (`seccomp_program`) before its code is read."""
    allowed_calls = ZYGOTE_ALLOWED if zygote else ()
    names = sorted(
        {name for table in _DENIED.values() for name in table if name not in allowed_calls} | set(_DENIED_COMMON)
    )
    allowed = sorted(SOCKET_FAMILIES.values())
    # libseccomp takes one comparison per argument in a rule: refuse the families below, between and above the allowed
    ranges = [(low + 1, high) for low, high in zip([-1, *allowed], [*allowed, 1 << 32]) if high - low > 1]
    family_rules = [
        {
            "names": ["socket", "socketpair"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 1,
            "args": [{"index": 0, "value": value, "op": "SCMP_CMP_EQ"}],
        }
        for low, high in ranges[:-1]
        for value in range(low, high)
    ]
    family_rules.append(
        {
            "names": ["socket", "socketpair"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 1,
            "args": [{"index": 0, "value": ranges[-1][0], "op": "SCMP_CMP_GE"}],
        }
    )
    # no namespace of its own: clone with any namespace flag fails (its user namespace would hold
    # every capability), one rule a flag, as libseccomp compares one masked argument a rule
    namespace_rules = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 1,
            "args": [{"index": 0, "value": bit, "valueTwo": bit, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for bit in (1 << k for k in range(32))
        if CLONE_NAMESPACES & bit and not zygote
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
            *namespace_rules,
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
            *family_rules,
        ],
    }


def bwrap_command(
    mounts: Sequence[str],
    workdir: str,
    env: Mapping[str, str],
    argv: Sequence[str],
    *,
    caps: Sequence[str] = (),
    seccomp_fd: int | None = None,
    as_pid_1: bool = False,
) -> list[str]:
    """The one bubblewrap command line both sandboxes launch (completions' servers and episodes'
    shells and judges) and the probe runs: every namespace, no nested user namespace (it would grant
    full capabilities inside), no capability but `caps`, killed with its parent, a session of its
    own, the seccomp filter read from `seccomp_fd`, then `mounts` (the caller's filesystem, ending
    read-only), `workdir`, a clean environment of `env` only, and `argv`."""
    return [
        "bwrap",
        *(["--as-pid-1"] if as_pid_1 else []),
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--assert-userns-disabled",
        "--cap-drop",
        "ALL",
        *caps,
        "--die-with-parent",
        "--new-session",
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
        *mounts,
        "--chdir",
        workdir,
        "--clearenv",
        *(arg for key, value in env.items() for arg in ("--setenv", key, value)),
        *argv,
    ]


def as_uid(uid: int) -> list[str]:
    """The command prefix that runs what follows as `uid` (root only can switch; others keep their own
    uid, and the sandbox still applies)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
