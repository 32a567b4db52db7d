"""Episodes on Docker, through the SDK: the same shell, layout and judge as on bubblewrap, in
containers of an image the daemon already has. No registry is reachable, so a task that runs on
this machine's tools runs in `host_tools_image()`: bash, coreutils, grep, sed, awk, find, diff,
tar, ps and python3 from this machine's Debian packages, made into an image with `docker import`.

Nothing is shared with the harness's filesystem (files travel as tar streams through `docker exec`),
so the daemon may be remote (`DOCKER_HOST=tcp://…`)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import os
import shutil
import socket
import subprocess
import tarfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curriculab.training.sandbox.docker_backend import add_folders, client, confinement, import_image, linked_libraries
from curriculab.training.sandbox.isolation import UidLease
from curriculab.training.terminal import sibling
from curriculab.training.terminal.shared import (
    RAN_BYTES,
    RAN_FILE,
    SKIPPED_ROOTS,
    EpisodeLimits,
    JudgedCopy,
    StepVerdict,
    agent_env,
    display_path,
    link_allowed,
    refused_verdict,
    verdict,
    verifier_env,
    writable_roots,
)
from curriculab.training.terminal.task import Step, TerminalTask

HOST_TOOL_PACKAGES = (
    "bash",
    "dash",
    "coreutils",
    "grep",
    "sed",
    "mawk",
    "findutils",
    "diffutils",
    "tar",
    "gzip",
    "procps",
    "libc6",
    "python3-minimal",
    "python3.11-minimal",
    "libpython3.11-minimal",
    "libpython3.11-stdlib",
    "python3.11",
)
"""Debian packages whose files make the host-tools image (their shared libraries come along)."""
_LINKS = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64", "usr/bin/awk": "mawk"}
_IMAGE_VERSION = "2"
"""Bumped when the image's recipe changes (its tag names it with the packages' versions)."""


def _package_files(package: str) -> list[Path]:
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=False).stdout
    return [Path(line) for line in listing.splitlines() if line.startswith("/")]


def _in_image(path: Path) -> str:
    """Where a host path goes in the image (usrmerge: /bin, /lib … are links to /usr's)."""
    name = str(path).lstrip("/")
    return "usr/" + name if name.split("/")[0] in ("bin", "sbin", "lib", "lib64") else name


@functools.cache
def _host_tools_tag(packages: tuple[str, ...]) -> str:
    """The image's tag: its recipe's version and the packages' versions (asked of dpkg once a process)."""
    if not shutil.which("dpkg-query"):
        raise RuntimeError("the host-tools image is made from Debian packages, and dpkg is not here")
    versions = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}=${Version}\n", *packages], capture_output=True, text=True, check=False
    ).stdout
    return "curriculab-episode:host-" + hashlib.sha256((_IMAGE_VERSION + versions).encode()).hexdigest()[:12]


def host_tools_image(docker_client: Any, packages: tuple[str, ...] = HOST_TOOL_PACKAGES) -> str:
    """Import (once; the tag names the packages' versions) an image of this machine's tools."""

    def fill(tar: tarfile.TarFile) -> None:
        files: set[Path] = set()
        links: dict[str, str] = {}
        for package in packages:
            for path in _package_files(package):
                if path.is_symlink() and path.parent != Path("/"):  # not usrmerge's /bin -> usr/bin itself
                    links[_in_image(path)] = os.readlink(path)
                elif path.is_file():
                    files.add(path)
        for path in list(files):
            if os.access(path, os.X_OK) or ".so" in path.name:
                files.update(linked_libraries(path))
        add_folders(tar, ("tmp", "root", "etc", "proc", "dev", "usr/bin", "usr/lib", "usr/sbin"))
        placed: dict[str, Path] = {}
        for path in sorted(files):
            placed.setdefault(_in_image(path), path.resolve())
        links.update(_LINKS)
        for arcname, real in sorted(placed.items()):
            if arcname not in links:
                tar.add(str(real), arcname=arcname, recursive=False)
        for link, target in sorted(links.items()):
            info = tarfile.TarInfo(link)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, text in (
            ("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"),
            ("etc/group", "root:x:0:\n"),
        ):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))

    return import_image(docker_client, _host_tools_tag(packages), fill)


def task_image(docker_client: Any, task: TerminalTask) -> str | None:
    """The task's own image when the daemon has it (`[environment] docker_image`, never pulled)."""
    import docker

    name = task.config.environment.docker_image
    if not name:
        return None
    try:
        docker_client.images.get(name)
        return name
    except docker.errors.ImageNotFound:
        return None


def _top_folders(task: TerminalTask) -> list[str]:
    """A prebuilt image's writable folders: its workdir's and its Dockerfile's COPY targets' tops."""

    tops = [path.strip("/").split("/")[0] for path in [task.workdir, *(p.target for p in task.image.placements)]]
    return list(dict.fromkeys(t for t in tops if t and t not in SKIPPED_ROOTS))


def _unframe(data: bytes) -> tuple[bytes, bytes]:
    """The payloads of the whole frames in `data` (the daemon's stream, 0, 0, 0, big-endian length
    headers; stdout and stderr alike), and the bytes of a frame not yet complete."""
    out = bytearray()
    while len(data) >= 8:
        size = int.from_bytes(data[4:8], "big")
        if len(data) < 8 + size:
            break
        out += data[8 : 8 + size]
        data = data[8 + size :]
    return bytes(out), data


def exec_run(
    container: Any,
    command: list[str],
    user: str,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    workdir: str | None = None,
) -> tuple[int, bytes]:
    """Run `command` in a running container (feeding `stdin`, then closing it); its exit code and
    stdout+stderr. Works on a remote daemon: the bytes travel over the API's hijacked stream."""
    api = container.client.api
    # over TLS there is no half-close (SSLSocket.shutdown drops the TLS layer, and the replies after it
    # would be read as raw records): the command reads exactly the bytes sent instead of an end of file
    tls = stdin is not None and api.base_url.startswith("https://")
    if tls:
        assert stdin is not None
        command = ["/bin/sh", "-c", 'head -c "$0" | "$@"', str(len(stdin)), *command]
    created = api.exec_create(
        container.id, command, stdin=stdin is not None, user=user, environment=env, workdir=workdir
    )
    raw = api.exec_start(created["Id"], socket=True)
    sock = getattr(raw, "_sock", raw)
    sock.settimeout(None)  # a verifier may run for minutes: its caller bounds it, not the client's timeout
    try:
        if stdin is not None:
            sock.sendall(stdin)
            if not tls:
                sock.shutdown(socket.SHUT_WR)
            else:
                sock.settimeout(0.2)  # its stdin still open, the stream may outlive the command: ask
        output, pending = bytearray(), b""
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except TimeoutError:
                if api.exec_inspect(created["Id"]).get("Running"):
                    continue
                break
            if not chunk:
                break
            payload, pending = _unframe(pending + chunk)
            output += payload
    finally:
        sock.close()
    return api.exec_inspect(created["Id"])["ExitCode"], bytes(output)


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception:  # already gone; cleanup never hides a verdict
        pass


# Finds the agent's shell (the bash `docker exec` started: its parent is outside the container) and
# interrupts the command it runs as Ctrl-C would: SIGUSR1 to the shell, SIGKILL to its descendants
# except the background jobs it had before the command (listed by the command's prefix).
_INTERRUPT = r"""
desc() { for c in $(cat /proc/$1/task/*/children 2>/dev/null); do echo $c; desc $c; done; }
shell=
for stat in /proc/[0-9]*/stat; do
  read -r pid comm state ppid rest < "$stat" 2>/dev/null || continue
  [ "$comm" = "(bash)" ] && [ "$ppid" = 0 ] && shell=$pid
done
[ -n "$shell" ] || exit 0
keep=" $(for j in $(cat /logs/.curriculab-jobs 2>/dev/null); do echo $j; desc $j; done | tr '\n' ' ') "
kill -USR1 "$shell"
for p in $(desc "$shell"); do case "$keep" in *" $p "*) ;; *) kill -9 "$p" 2>/dev/null;; esac; done
"""


# test.sh is not the container's init, so nothing the tests started dies with it: the same exec
# kills every process of the verifier's uid the moment test.sh exits (the shell's builtin kill
# spares the shell), leaving no window between the verdict and a later `docker exec`.
_RUN_TESTS = '/bin/bash "$1"; status=$?; kill -9 -1 2>/dev/null; exit "$status"'


def _tar_of(entries: list[tuple[Path, str]]) -> bytes:
    """A tar of host files and folders, each under its arcname, owned by nobody in particular."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            return info

        for source, arcname in entries:
            tar.add(str(source), arcname=arcname, filter=reset)
    return buffer.getvalue()


def _safe_extract(data: bytes, target: Path) -> None:
    """Extract regular files and folders only (a judge's logs are read, never trusted as paths)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = Path(member.name)
            if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
                continue
            tar.extract(member, target, set_attrs=False, filter="data")


class DockerAgent:
    """The agent's side on Docker: a container of the task's image (the daemon's own, or the
    host-tools image) whose writable folders are size-capped tmpfs; the shell is a `docker exec`,
    so it can exit and start again without losing the files; the judge is a fresh container."""

    backend = "docker"
    command_prefix = "jobs -p > /logs/.curriculab-jobs 2>/dev/null; "

    def __init__(self, task: TerminalTask, limits: EpisodeLimits, oracle: bool, docker_client: Any = None):
        self.task, self.limits, self.oracle = task, limits, oracle
        self.docker = docker_client or client()
        if self.docker is None:
            raise RuntimeError("no Docker daemon answers. Start one (dockerd) or use the bwrap backend")
        self.prebuilt = task_image(self.docker, task)
        """The task's own image (its files and tools built in), else None: the host-tools image."""
        self.image = self.prebuilt or host_tools_image(self.docker)
        self.roots = writable_roots(task) if self.prebuilt is None else _top_folders(task)
        self.lease, self.judge_lease = UidLease(), UidLease()
        self.uid = self.lease.uid
        self.socket = None
        self.exec_id: str | None = None
        self.pending = b""
        self.container: Any = None  # the SDK's Container (untyped); None once closed
        try:
            folders = [*self.roots, "root", "logs", *(["solution"] if oracle else [])]
            self.container = self._container(self.uid, folders)
            user = f"{self.uid}:{self.uid}"
            if self.prebuilt is not None:  # the image's own files in its writable folders, seeded into their tmpfs
                for name in self.roots:
                    seed = self._image_folder(name)
                    if seed:
                        self._untar(self.container, seed, user)
            else:
                placements = [(p.source, p.target.lstrip("/")) for p in task.image.placements]
                if placements:
                    self._untar(self.container, _tar_of(placements), user)
            exec_run(self.container, ["mkdir", "-p", task.workdir], user)
        except BaseException:
            self.close()
            raise

    @property
    def replays_setup(self) -> bool:
        """Whether the Dockerfile's RUN lines are replayed (not in the task's own image: they built it)."""
        return self.prebuilt is None

    def _image_folder(self, name: str) -> bytes | None:
        """The image's /<name> as a tar (from a created, never started, container), or None."""
        import docker

        holder = self.docker.containers.create(self.image, ["/bin/true"], network_disabled=True)
        try:
            stream, _ = holder.get_archive(f"/{name}")
            return b"".join(stream)
        except docker.errors.NotFound:
            return None
        finally:
            holder.remove(force=True)

    def _container(
        self, uid: int, folders: list[str], root_owned: tuple[str, ...] = (), caps: tuple[str, ...] = ()
    ) -> Any:
        """A running container of the image, its main process an idle root `cat` (so the agent's
        uid can kill all its own processes without stopping it), every folder a tmpfs."""
        # capped in files as in bytes (each file costs the host kernel memory no byte cap counts); Docker
        # mounts a tmpfs noexec unless told: scripts the agent writes must run, as on bubblewrap
        bounds = f"size={self.limits.disk_bytes},nr_inodes={self.limits.inodes}"
        tmpfs = {f"/{name}": f"{bounds},uid={uid},gid={uid},mode=0755,exec" for name in folders}
        tmpfs["/tmp"] = tmpfs["/dev/shm"] = f"{bounds},mode=1777,exec"  # Docker's own /dev/shm is capped in bytes only
        for name in root_owned:
            tmpfs[f"/{name}"] = f"{bounds},mode=0755,exec"
        return self.docker.containers.run(
            self.image,
            ["/bin/cat"],
            stdin_open=True,
            detach=True,
            user="0:0",
            init=True,
            network_disabled=True,
            network_mode="none",
            tmpfs=tmpfs,
            **({"cap_add": list(caps)} if caps else {}),
            **confinement(
                memory_bytes=self.limits.memory_bytes,
                processes=self.limits.processes,
                cpu_s=self.limits.cpu_s,
                file_bytes=self.limits.file_bytes,
                open_files=self.limits.open_files,
            ),
        )

    def _untar(self, container: Any, data: bytes, user: str, into: str = "/") -> None:
        code, output = exec_run(container, ["tar", "-x", "--no-same-owner", "-C", into], user, stdin=data)
        if code != 0:
            raise RuntimeError(f"could not place files in the container: {output.decode(errors='replace')[-300:]}")

    # -- the shell ----------------------------------------------------------------------------

    def start_shell(self) -> None:
        api = self.docker.api
        self.exec_id = api.exec_create(
            self.container.id,
            ["/bin/bash", "--noprofile", "--norc"],
            stdin=True,
            user=f"{self.uid}:{self.uid}",
            environment=agent_env(self.task),
            workdir=self.task.workdir,
        )["Id"]
        raw = api.exec_start(self.exec_id, socket=True)
        self.socket = getattr(raw, "_sock", raw)
        self.pending = b""

    def shell_started(self) -> None:
        pass

    def alive(self) -> bool:
        return self.socket is not None

    def write(self, data: bytes) -> bool:
        try:
            assert self.socket is not None
            self.socket.sendall(data)
            return True
        except OSError:
            return False

    def read(self, timeout: float) -> bytes | None:
        """The shell's stdout and stderr, unframed (None: nothing within `timeout`; b"": it exited)."""
        assert self.socket is not None
        self.socket.settimeout(timeout)
        try:
            chunk = self.socket.recv(1 << 16)
        except TimeoutError:
            # the daemon keeps an exec's stream open while its stdin is: ask whether the shell is gone
            running = self.docker.api.exec_inspect(self.exec_id).get("Running")
            return None if running else b""
        except OSError:
            chunk = b""
        if not chunk:
            return b""
        out, self.pending = _unframe(self.pending + chunk)
        return out or None

    def exit_code(self) -> int:
        if self.exec_id is None:
            return 1
        code = self.docker.api.exec_inspect(self.exec_id).get("ExitCode")
        return code if code is not None else 1

    def before_command(self) -> frozenset[int]:
        return frozenset()  # an interrupt ends every process of the agent's uid but the shell

    def interrupt(self, before: frozenset[int]) -> None:
        exec_run(self.container, ["/bin/sh", "-c", _INTERRUPT], f"{self.uid}:{self.uid}")

    def end_shell(self) -> None:
        """Kill every process of the agent's uid in the container (the root `cat` stays)."""
        if self.socket is not None:
            try:
                self.socket.close()
            except OSError:
                pass
            self.socket = None
        if self.container is not None:
            exec_run(self.container, ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; true"], f"{self.uid}:{self.uid}")

    def _listing(self, folders: list[str], record: bool = False) -> tuple[list[list[bytes]], bool, bytes | None]:
        """Up to `judged_entries` entries under `folders` (a find in the container as the agent's
        uid: what it made unreadable to itself is not looked into, as the judge's copy does not),
        each as [type, depth, size, mtime, path, link target]; False when there were more.
        NUL-separated, so no name (tabs, newlines, bytes that are not UTF-8) can break a record; the
        listing stops at the bound, so its cost does not grow with what the agent made. With
        `record`, the same exec first takes the trap's record of the last command (moved aside, so
        a background job's later records start a new file), its length first: one exec a command."""

        bound = self.limits.judged_entries
        script = (
            'find "$@" -xdev -mindepth 1 -printf "%y\\0%d\\0%s\\0%T@\\0%p\\0%l\\0" 2>/dev/null'
            f" | head -z -n {6 * (bound + 1)}"
        )
        if record:
            taken = f"{RAN_FILE}.taken"
            script = (
                f"mv -f {RAN_FILE} {taken} 2>/dev/null; n=$(wc -c < {taken} 2>/dev/null || echo 0); "
                f'[ "$n" -gt {RAN_BYTES} ] && n={RAN_BYTES}; echo "$n"; tail -c "$n" {taken} 2>/dev/null; '
                f"rm -f {taken}; " + script
            )
        user = f"{self.uid}:{self.uid}"
        _, output = exec_run(self.container, ["/bin/sh", "-c", script, "sh", *folders], user)
        ran = None
        if record:
            length, _, output = output.partition(b"\n")
            size = int(length) if length.strip().isdigit() else 0
            ran, output = output[:size] or None, output[size:]
        fields = output.split(b"\0")
        entries = [fields[i : i + 6] for i in range(0, len(fields) - 6, 6)]
        return entries[:bound], len(entries) <= bound, ran

    def files(self) -> tuple[dict[str, tuple[int, int]], bool]:
        """Every file of the task's folders and /root: size and modification time, by path (display-
        safe); False past `judged_entries` entries, folders counted."""
        entries, whole, _ = self._listing([f"/{name}" for name in (*self.roots, "root")])
        return self._found(entries), whole

    def after_command(self) -> tuple[bytes | None, dict[str, tuple[int, int]], bool]:
        """The trap's record of the last command and the files now (`files`), in one exec."""
        entries, whole, ran = self._listing([f"/{name}" for name in (*self.roots, "root")], record=True)
        return ran, self._found(entries), whole

    @staticmethod
    def _found(entries: list[list[bytes]]) -> dict[str, tuple[int, int]]:

        found: dict[str, tuple[int, int]] = {}
        for kind, _, size, stamp, path, _ in entries:
            if kind != b"d" and size.isdigit():
                found[display_path(os.fsdecode(path))] = (int(size), int(float(stamp or b"0") * 1e9))
        return found

    def judged_files(self) -> tuple[bytes | None, str | None]:
        """A tar of what the judge gets of the agent's folders (`JudgedCopy`'s rule: files, folders
        and links that resolve inside them or the system folders), or the reason there is none."""

        copy = JudgedCopy(self.limits, self.roots)
        entries, whole, _ = self._listing([f"/{name}" for name in self.roots])
        if not whole:
            return None, f"the agent left more than {self.limits.judged_entries:,} files and folders"
        links = {os.fsdecode(e[4]): os.fsdecode(e[5]) for e in entries if e[0] == b"l"}
        kept: list[bytes] = [name.encode() for name in self.roots]
        for kind, depth, size, _, path, target in entries:
            name = os.fsdecode(path)
            if not copy.admit(name, int(depth or b"0")) or (kind == b"f" and not copy.grow(int(size or b"0"))):
                return None, copy.refused
            if kind in (b"f", b"d") or (
                kind == b"l" and link_allowed(name, os.fsdecode(target), links.get, self.roots)
            ):
                kept.append(path.lstrip(b"/"))
        user = f"{self.uid}:{self.uid}"
        command = ["tar", "-c", "-C", "/", "--no-recursion", "--null", "-T", "-"]
        code, files = exec_run(self.container, command, user, stdin=b"\0".join(kept) + b"\0")
        if code != 0:
            raise RuntimeError(f"could not copy the agent's files for the judge: {files[-300:]!r}")
        return files, None

    def stage_solution(self, source: Path | None) -> None:
        user = f"{self.uid}:{self.uid}"
        exec_run(self.container, ["/bin/sh", "-c", "rm -rf /solution/* /solution/.[!.]*"], user)
        if source is not None:
            self._untar(
                self.container, _tar_of([(child, child.name) for child in sorted(source.iterdir())]), user, "/solution"
            )

    # -- the judge ----------------------------------------------------------------------------

    def judge(self, step: Step, replay: Sequence[str] | None = None) -> StepVerdict:
        import time

        uid = self.judge_lease.uid
        files, refused = self.judged_files()
        if files is None:
            return refused_verdict(step, refused or "the agent's files could not be read")
        judge = self._container(
            uid, [*self.roots, "root", "logs/verifier", sibling.SOCKET_FOLDER[1:]], ("tests",), sibling.JUDGE_CAPS
        )
        started = time.monotonic()
        lease = UidLease()  # the uid the agent's programs run as when the checks ask (`sibling`)
        server: sibling.RelayServer | None = None
        try:
            tests = _tar_of([(child, child.name) for folder in step.test_dirs for child in sorted(folder.iterdir())])
            self._untar(judge, tests, "0:0", "/tests")  # root's, read-only to the verifier
            self._untar(judge, files, f"{uid}:{uid}")
            timeout = min(self.limits.verifier_timeout_s, step.verifier_timeout_s or self.limits.verifier_timeout_s)
            env = verifier_env(step)
            server = sibling.docker_siblings(judge, self.roots, uid, lease.uid, env, timeout, exec_run)
            if server is not None:
                env[sibling.ENV_VAR] = sibling.SOCKET_PATH
            outcome: dict[str, Any] = {}

            def run_tests() -> None:
                try:
                    outcome["code"], outcome["output"] = exec_run(
                        judge,
                        ["/bin/sh", "-c", _RUN_TESTS, "sh", f"/tests/{step.test_script}"],
                        f"{uid}:{uid}",
                        env=env,
                        workdir=self.task.workdir,
                    )
                except Exception as exc:  # the daemon or the container failed: the harness's fault
                    outcome["failed"] = exc

            worker = threading.Thread(target=run_tests, daemon=True)
            worker.start()
            worker.join(timeout)
            if worker.is_alive():
                judge.kill()
                worker.join(5)
                return verdict(
                    step,
                    outcome.get("output", b""),
                    None,
                    time.monotonic() - started,
                    None,
                    f"the verifier timed out after {timeout:g} s",
                )
            if "failed" in outcome:
                raise RuntimeError(f"the verifier could not be run: {outcome['failed']}")
            if server is not None and server.failure is not None:
                raise sibling.SiblingError(server.failure)
            check = None
            if replay and server is not None:  # the agent's last test-runner check, replayed (`CheckRun`)
                check = sibling.replay(server.runner, replay, self.task.workdir, self.limits.command_timeout_s)
            # nothing the tests started outlives them; then the logs are read
            _, logs = exec_run(
                judge, ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; tar -c -C /logs/verifier ."], f"{uid}:{uid}"
            )
            import tempfile

            with tempfile.TemporaryDirectory(prefix="curriculab-judge-logs-") as folder:
                try:
                    _safe_extract(logs, Path(folder))
                except tarfile.TarError:
                    pass
                judged = verdict(
                    step, outcome["output"], outcome["code"], time.monotonic() - started, Path(folder), None
                )
                return dataclasses.replace(judged, check_run=check)
        finally:
            if server is not None:
                server.close()
            lease.close()
            # its processes are dead (killed above, or the timeout's kill): removing the rest of
            # the container need not hold up the episode
            threading.Thread(target=_remove, args=(judge,), daemon=True).start()

    def close(self) -> None:
        if self.container is not None:
            _remove(self.container)
            self.container = None
        for lease in (self.lease, self.judge_lease):
            lease.close()
