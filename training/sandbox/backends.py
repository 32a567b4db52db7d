"""Where a sandboxed process runs: one interface, `ProcessBackend`, through which both sandboxes
launch theirs — the completions' zygote and judge (`runner.py`) and the episodes' shell and verifier
(`training/terminal/episode.py`). A caller describes the sandbox once, in bubblewrap's mount
language (`--ro-bind`, `--bind`, `--tmpfs`, `--size`, `--symlink`, `--proc`, `--dev`,
`--remount-ro`), with its working folder, environment, command, uid, seccomp filter and kept
capabilities; a backend turns that into a command line:

- `Bwrap`: bubblewrap (`isolation.bwrap_command`), the default wherever it works.
- `Namespaces`: for a machine without bubblewrap (root only): the same mounts made by hand with
  `unshare`, `mount` and `chroot`, then the uid dropped and the same seccomp filter installed. Weaker,
  and said so wherever it is used: no read-only submounts of the host's folders, and no capability is
  kept (a completions' zygote then cannot give each completion namespaces of its own, and empties
  the shared /tmp after each instead).

The third backend, Docker, runs containers through the SDK rather than a command line (completions:
`docker_backend.DockerServer`; episodes: `terminal/docker.py`); `docker_backend.host_options` is its
one confinement and `docker_backend.import_image` its one image importer.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from curriculab.training.sandbox.isolation import as_uid, bwrap_command
from curriculab.trajectory.errors import CurriculabError

SANDBOX_BACKENDS = ("bwrap", "namespaces", "docker")
"""Where completions and episodes run; `rlimits` (completions only, a non-root machine without
bubblewrap) is no sandbox and is not one of them."""


class SandboxUnavailable(CurriculabError, RuntimeError):
    """A sandbox backend cannot run on this machine; the message says what it needs."""


@dataclass
class Launch:
    """A command ready for `subprocess.Popen`, and the descriptors it must inherit: pass them as
    `pass_fds`, then `close` them here once the process has started."""

    command: list[str]
    """The whole command line, the uid switch included."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the sandbox reads at its start (bubblewrap's seccomp filter)."""

    def close(self) -> None:
        for fd in self.pass_fds:
            os.close(fd)


class ProcessBackend(Protocol):
    """A way to start one process in a sandbox of its own."""

    @property
    def name(self) -> str:
        """bwrap or namespaces (as `RunResult.backend` and `Episode.backend` report it)."""
        ...

    def launch(
        self,
        mounts: Sequence[str],
        workdir: str,
        env: Mapping[str, str],
        argv: Sequence[str],
        *,
        uid: int,
        seccomp: bytes | None,
        caps: Sequence[str] = (),
    ) -> Launch:
        """The command that runs `argv` as `uid` in `workdir`, with only `env`, over `mounts` (ending
        read-only), under the `seccomp` program (None: none on this architecture), keeping `caps`
        (bubblewrap's `--cap-add NAME` pairs) where the backend can."""
        ...


def memfd(content: bytes, name: str = "sandbox-data") -> int:
    """A memfd holding `content`, read from its start: what a sandbox reads at its start (a filter,
    a data file) without a path on the host."""
    fd = os.memfd_create(name)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass(frozen=True)
class Bwrap:
    """bubblewrap. It reads the seccomp filter from a fresh memfd (to its end, so one per launch)."""

    as_pid_1: bool = False
    """Run `argv` as its pid namespace's init (a bubblewrap that supports `--as-pid-1`)."""
    under: tuple[str, ...] = ()
    """A command run between the uid switch and bubblewrap (the completions' reaper, where
    bubblewrap cannot run `argv` as pid 1)."""

    name = "bwrap"

    def launch(
        self,
        mounts: Sequence[str],
        workdir: str,
        env: Mapping[str, str],
        argv: Sequence[str],
        *,
        uid: int,
        seccomp: bytes | None,
        caps: Sequence[str] = (),
    ) -> Launch:
        fd = memfd(seccomp, "sandbox-seccomp") if seccomp is not None else None
        box = bwrap_command(mounts, workdir, env, argv, caps=caps, seccomp_fd=fd, as_pid_1=self.as_pid_1)
        return Launch([*as_uid(uid), *self.under, *box], (fd,) if fd is not None else ())


@dataclass(frozen=True)
class Namespaces:
    """bubblewrap's mounts made by hand (root only): `unshare` gives new mount, pid, network, IPC and
    UTS namespaces; a script there mounts a tmpfs root at `root` with the same folders bound in (a
    /dev of its own), then `chroot`, `setpriv` drops to the uid with no capability and no new
    privileges, the seccomp filter is installed, and `argv` runs with a clean environment. The root
    mount lives in the sandbox's mount namespace only, so it goes when the sandbox ends. The command
    runs as that namespace's pid 1 (`unshare`'s child), so killing it ends the whole sandbox."""

    root: Path
    """An empty folder the sandbox's root is mounted on (one per sandbox)."""
    shm: str = "size=64m,nr_inodes=16384"
    """Caps of the /dev/shm tmpfs its `--dev` makes, in bytes and in files (each file costs kernel
    memory no byte cap counts): made in the same mount, no extra step per sandbox."""

    name = "namespaces"

    def launch(
        self,
        mounts: Sequence[str],
        workdir: str,
        env: Mapping[str, str],
        argv: Sequence[str],
        *,
        uid: int,
        seccomp: bytes | None,
        caps: Sequence[str] = (),
    ) -> Launch:
        if os.geteuid() != 0:
            raise SandboxUnavailable("the namespaces sandbox needs root: run as root or install bubblewrap")
        if seccomp is not None and not os.path.exists("/usr/bin/python3"):
            raise SandboxUnavailable(
                "the namespaces sandbox installs its seccomp filter with /usr/bin/python3, absent here"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        settings = [f"{key}={value}" for key, value in env.items()]
        return Launch(
            [
                "/usr/bin/setpriv",  # as bubblewrap's --die-with-parent: gone with the thread that started it
                "--pdeathsig",
                "KILL",
                system_tool("unshare"),
                "--mount",
                "--pid",
                "--net",
                "--ipc",
                "--uts",
                "--fork",
                "--kill-child",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                _mount_script(mounts, self.root, self.shm),
                "sh",
                system_tool("chroot"),
                str(self.root),
                "/usr/bin/setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--no-new-privs",
                "--pdeathsig",  # a uid change clears it: the sandbox still goes with unshare
                "KILL",
                *(["/usr/bin/python3", "-I", "-S", "-c", _SECCOMP_THEN_EXEC, seccomp.hex()] if seccomp else []),
                "/usr/bin/env",
                "-i",
                "-C",
                workdir,
                *settings,
                *argv,
            ]
        )


def system_tool(name: str) -> str:
    """A system program by absolute path (a bare PATH may lack the sbin folders)."""
    found = shutil.which(name) or next(
        (f"{d}/{name}" for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin") if os.path.exists(f"{d}/{name}")), None
    )
    if found is None:
        raise SandboxUnavailable(f"the namespaces sandbox needs `{name}` (util-linux / coreutils)")
    return found


_SECCOMP_THEN_EXEC = """
import ctypes, os, sys
program = bytes.fromhex(sys.argv[1])
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(22, 2, ctypes.byref(Program(len(program) // 8, program)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    sys.exit("the sandbox's seccomp filter could not be installed: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"""
"""Installs the seccomp filter (setpriv set no_new_privs before), then execs the rest: the last
link of the chain, after every mount and the chroot the filter would refuse."""


def _own_dev(mount: str, mkdir: str, ln: str, target: str, shm: str) -> list[str]:
    """A /dev as bubblewrap's `--dev` makes it: a tmpfs with the harmless host devices bound in,
    the fd links, a private devpts instance and a fresh /dev/shm; no other host device node."""
    lines = [f"{mount} -t tmpfs -o mode=0755,nosuid,size=1m curriculab-dev {target}"]
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        lines += [f": > {target}/{name}", f"{mount} --bind /dev/{name} {target}/{name}"]
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1")):
        lines.append(f"{ln} -s {link} {target}/{name}")
    lines += [f"{ln} -s /proc/self/fd/2 {target}/stderr", f"{mkdir} {target}/pts {target}/shm"]
    lines.append(f"{mount} -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts {target}/pts || true")
    lines += [f"{ln} -s pts/ptmx {target}/ptmx", f"{mount} -t tmpfs -o mode=1777,nosuid,nodev,{shm} shm {target}/shm"]
    return lines


def _mount_script(mounts: Sequence[str], root: Path, shm: str) -> str:
    """The shell script that makes bubblewrap's `mounts` under `root`, then execs its arguments."""
    q = shlex.quote
    mount, mkdir, ln = (q(system_tool(name)) for name in ("mount", "mkdir", "ln"))  # a bare PATH has none
    lines = ["set -e", f"{mount} -t tmpfs -o mode=0755 curriculab-root {q(str(root))}"]
    size: str | None = None
    args = iter(mounts)
    for option in args:
        if option == "--size":
            size = next(args)
            continue
        if option == "--symlink":
            target, path = next(args), next(args)
            lines.append(f"{ln} -s {q(target)} {q(str(root) + path)}")
            continue
        if option == "--remount-ro":
            path = next(args)
            lines.append(f"{mount} -o remount,ro,bind {q(str(root) + path.rstrip('/'))}")
            continue
        if option in ("--proc", "--dev", "--tmpfs"):
            source, path = None, next(args)
        elif option in ("--bind", "--ro-bind"):
            source, path = next(args), next(args)
        else:
            raise ValueError(f"the namespaces sandbox does not make bubblewrap's {option}")
        target = q(str(root) + path)
        lines.append(f"{mkdir} -p {target}")
        if option == "--proc":
            lines.append(f"{mount} -t proc proc {target}")
        elif option == "--dev":
            lines += _own_dev(mount, mkdir, ln, target, shm)
        elif option == "--tmpfs":
            lines.append(f"{mount} -t tmpfs {'-o size=' + size + ' ' if size else ''}tmpfs {target}")
            size = None
        else:
            lines.append(f"{mount} --bind {q(source or '')} {target}")
            if option == "--ro-bind":
                lines.append(f"{mount} -o remount,ro,bind {target}")
    lines.append('exec "$@"')
    return "\n".join(lines)
