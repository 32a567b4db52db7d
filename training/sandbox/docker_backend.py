"""The Docker backend: the same sandbox roles (zygote, judge) in containers through the Docker SDK —
network disabled, a cgroup with memory and pid limits, read-only root, every capability dropped, no
new privileges, the seccomp rules of the bubblewrap backend, a uid of its own, a size-capped /tmp.
No registry is reachable, so the image is imported from a tarball of this machine's system Python
and the libraries it links (`build_image`).

Nothing is shared with the harness's filesystem, so the daemon may be on another machine
(`DOCKER_HOST=tcp://…`, TLS through the usual DOCKER_TLS_VERIFY/DOCKER_CERT_PATH): the box files
reach each container with `put_archive`, and control runs over its attach stream."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.training.sandbox.isolation import docker_seccomp_profile

if TYPE_CHECKING:
    from curriculab.training.sandbox.runner import Limits

IMAGE = "curriculab-sandbox:py311-3"
OWNER_LABEL = "curriculab.owner"
"""Each sandbox container's label: the pid of the process that made it, so one run finds its own
containers on a daemon others use too (`docker ps --filter label=curriculab.owner=PID`)."""
_PYTHON = Path("/usr/bin/python3.11")
_STDLIB = Path("/usr/lib/python3.11")


def client() -> Any:
    """A Docker client, or None when no daemon answers (or the SDK is missing)."""
    try:
        import docker
    except ImportError:
        return None
    tls = os.environ.get("DOCKER_TLS_VERIFY", "") != ""
    try:
        # over TLS, requests would put REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE over DOCKER_CERT_PATH's CA
        # (trust_env): set it aside before the first request, then negotiate the version as "auto" does
        c = docker.from_env(timeout=10, version="1.41" if tls else None)
        if tls:
            c.api.trust_env = False
            c.api._version = c.api.version(api_version=False)["ApiVersion"]
        c.ping()
        return c
    except Exception:  # any failure to reach the daemon means: no Docker backend here
        return None


def linked_libraries(binary: Path) -> set[Path]:
    """The shared libraries `binary` loads (ldd's answer; none for a static one)."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False).stdout
    found = set()
    for line in out.splitlines():
        target = line.split("=>")[-1].strip().split(" ")[0]
        if target.startswith("/"):
            found.add(Path(target))
    return found


def add_folders(tar: tarfile.TarFile, names: Sequence[str]) -> None:
    """Empty folders in an image's tar (tmp sticky and world-writable, the rest 0755)."""
    for name in names:
        info = tarfile.TarInfo(name)
        info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
        tar.addfile(info)


def import_image(docker_client: Any, tag: str, fill: Callable[[tarfile.TarFile], None]) -> str:
    """The image `tag`, imported from a tarball of this machine's files (`fill` writes them into it)
    unless the daemon has it: the one way both sandboxes make images, since no registry is reached."""
    import docker

    try:
        docker_client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        fill(tar)
    repository, version = tag.split(":")
    docker_client.api.import_image_from_data(buffer.getvalue(), repository=repository, tag=version)
    return tag


def build_image(docker_client: Any, tag: str = IMAGE) -> str:
    """Import a minimal image (python3.11, its stdlib and linked libraries) unless it exists."""

    def fill(tar: tarfile.TarFile) -> None:
        libraries = linked_libraries(_PYTHON)
        for module in (_STDLIB / "lib-dynload").glob("*.so"):
            libraries.update(linked_libraries(module))

        def add(path: Path, arcname: str | None = None) -> None:
            tar.add(
                str(path.resolve()),
                arcname=(arcname or str(path)).lstrip("/"),
                recursive=True,
                filter=lambda info: None if "/test/" in f"/{info.name}/" or "__pycache__" in info.name else info,
            )

        add(_PYTHON, "usr/bin/python3")
        add(_STDLIB)
        for library in libraries:
            add(library, str(library))
            add(library, "usr" + str(library) if not str(library).startswith("/usr") else str(library))
        add_folders(tar, ("tmp", "box", "etc", "proc", "dev"))

    return import_image(docker_client, tag, fill)


class AttachStream:
    """A container's attach stream as the socket calls `server.send`/`recv` use: writes go to its
    stdin; reads return its stdout, demultiplexed from the daemon's 8-byte frame headers (stream,
    0, 0, 0, big-endian length). Anything the container writes to stderr is skipped."""

    def __init__(self, raw: Any) -> None:
        self.sock = getattr(raw, "_sock", raw)  # the SDK hands back a SocketIO over the hijacked socket
        self.header = b""
        self.left = 0  # bytes of the current frame not yet read
        self.stream = 1

    def settimeout(self, seconds: float | None) -> None:
        self.sock.settimeout(seconds)

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, size: int) -> bytes:
        while True:
            while self.left == 0:  # a header, possibly over several reads (a timeout keeps what came)
                head: bytes = self.sock.recv(8 - len(self.header))
                if not head:
                    return b""
                self.header += head
                if len(self.header) == 8:
                    self.stream, self.left = self.header[0], struct.unpack(">I", self.header[4:])[0]
                    self.header = b""
            chunk: bytes = self.sock.recv(min(size, self.left) if self.stream == 1 else self.left)
            if not chunk:
                return b""
            self.left -= len(chunk)
            if self.stream == 1:
                return chunk

    def close(self) -> None:
        self.sock.close()


def _archive(box: Path) -> bytes:
    """The box's files (server.py, the child's seccomp filter), root-owned and read-only to the sandbox's uid."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(box.iterdir()):
            info = tarfile.TarInfo(path.name)
            info.size, info.mode = path.stat().st_size, 0o644
            with path.open("rb") as f:
                tar.addfile(info, f)
    return buffer.getvalue()


def confinement(
    *,
    memory_bytes: int,
    processes: int,
    cpu_s: int,
    file_bytes: int,
    open_files: int,
    cpu_soft_only: bool = False,
    zygote: bool = False,
) -> dict[str, Any]:
    """The one confinement every container gets, completions' and episodes' alike, as keyword
    arguments both `APIClient.create_host_config` and `containers.run` take: a read-only root, every
    capability dropped, no new privileges, the bubblewrap backend's seccomp rules (a `zygote`'s
    allow it to mount), memory without swap, a pid cap, CPU seconds (`cpu_soft_only`: a soft limit
    the process resets for each completion), file size and descriptor caps, and a bounded log."""
    from docker.types import Ulimit

    return {
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", "seccomp=" + json.dumps(docker_seccomp_profile(zygote=zygote))],
        "mem_limit": memory_bytes,
        "memswap_limit": memory_bytes,
        "pids_limit": processes,
        "ulimits": [
            Ulimit(name="cpu", soft=cpu_s, hard=-1 if cpu_soft_only else cpu_s),
            Ulimit(name="fsize", soft=file_bytes, hard=file_bytes),
            Ulimit(name="nofile", soft=open_files, hard=open_files),
        ],
        "log_config": {"Type": "json-file", "Config": {"max-size": "1m", "max-file": "1"}},
    }


class DockerServer:
    """One long-lived container running a sandbox role (zygote or judge) of server.py. A zygote
    joins the network namespace of its slot's judge (`judge`): no network there but loopback, and
    an abstract socket the judge listens on for the completion's channel."""

    def __init__(
        self,
        docker_client: Any,
        role: str,
        uid: int,
        box: Path,
        limits: Limits,
        cgroup_note: list[str],
        judge: DockerServer | None = None,
    ) -> None:
        from docker.types import Mount, Ulimit

        command = ["/usr/bin/python3", "-I", "-S", "-B", "/box/server.py", role, "stdio", "/tmp", "namespace"]
        confined = confinement(
            memory_bytes=limits.memory_bytes,
            processes=limits.processes,
            cpu_s=limits.cpu_s,
            file_bytes=limits.file_bytes,
            open_files=limits.open_files,
            cpu_soft_only=role == "judge",  # it lives through many completions, giving each its own CPU seconds
            zygote=role == "zygote",
        )
        confined["ulimits"] += [
            Ulimit(name="msgqueue", soft=0, hard=0),  # no POSIX message queue can be made at all
            # RLIMIT_DATA counts anonymous memory: a big allocation raises MemoryError before the cgroup kills
            Ulimit(name="data", soft=limits.memory_bytes, hard=limits.memory_bytes),
            Ulimit(name="nproc", soft=limits.processes, hard=limits.processes),
        ]
        host_config = docker_client.api.create_host_config(
            ipc_mode="private",
            # a zygote joins its judge's network namespace: no network there but loopback
            network_mode=f"container:{judge.container.id}" if judge else "none",
            tmpfs={"/tmp": f"size={limits.tmp_bytes},mode=1777"},
            mounts=[Mount("/box", None, type="volume")],  # the container's own, filled below, removed with it
            **confined,
        )
        if role == "zygote":
            # Docker's masks over /proc stop a proc mount in a user namespace (the CLI's
            # `--security-opt systempaths=unconfined`, which the SDK lacks): unmasked, each completion
            # mounts a /proc of its own pid namespace, as on bubblewrap. What the masks hid
            # (/proc/kcore, /proc/sysrq-trigger and the like) is root's alone, and the container's uid is not.
            host_config.update(MaskedPaths=[], ReadonlyPaths=[])
        created = docker_client.api.create_container(
            IMAGE,
            command,
            stdin_open=True,
            user=f"{uid}:{uid}",
            working_dir="/tmp",
            environment={"PATH": "/usr/bin", "HOME": "/tmp"},
            labels={OWNER_LABEL: str(os.getpid())},
            network_disabled=judge is None,
            host_config=host_config,
        )
        self.container: Any = docker_client.containers.get(created["Id"])
        cgroup_note[:] = [f"Docker cgroup per sandbox: memory {limits.memory_bytes >> 20} MiB, pids {limits.processes}"]
        try:
            self.container.put_archive("/box", _archive(box))
            # attached before it starts, so not a byte of the handshake is missed
            self.control = AttachStream(self.container.attach_socket(params={"stdin": 1, "stdout": 1, "stream": 1}))
            self.container.start()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        try:
            self.container.remove(force=True, v=True)  # killed first; its /box volume goes with it
        except Exception:  # already gone; never let cleanup hide the verdicts
            pass
        if hasattr(self, "control"):
            self.control.close()
