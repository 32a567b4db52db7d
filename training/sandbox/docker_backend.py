"""The Docker backend: the same sandbox roles (zygote, judge) in containers through the Docker SDK —
network disabled, a cgroup with memory and pid limits, read-only root, every capability dropped, no
new privileges, the seccomp rules of the bubblewrap backend, a uid of its own, a size-capped /tmp. No registry is reachable, so the image is imported from a tarball of
this machine's system Python and the libraries it links (`build_image`)."""

from __future__ import annotations

import io
import json
import os
import socket
import struct
import subprocess
import tarfile
from pathlib import Path

from curriculab.training.sandbox.isolation import Cgroup, docker_seccomp_profile

IMAGE = "curriculab-sandbox:py311-2"
_PYTHON = Path("/usr/bin/python3.11")
_STDLIB = Path("/usr/lib/python3.11")


def client():
    """A Docker client, or None when no daemon answers (or the SDK is missing)."""
    try:
        import docker
    except ImportError:
        return None
    try:
        c = docker.from_env(timeout=10)
        c.ping()
        return c
    except Exception:  # any failure to reach the daemon means: no Docker backend here
        return None


def _linked_libraries(binary: Path) -> list[Path]:
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    paths = []
    for line in out.splitlines():
        parts = line.split("=>")[-1].strip().split(" ")
        if parts and parts[0].startswith("/"):
            paths.append(Path(parts[0]))
    return paths


def build_image(docker_client, tag: str = IMAGE) -> str:
    """Import a minimal image (python3.11, its stdlib and linked libraries) unless it exists."""
    import docker

    try:
        docker_client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    buffer = io.BytesIO()
    libraries = set(_linked_libraries(_PYTHON))
    for module in (_STDLIB / "lib-dynload").glob("*.so"):
        libraries.update(_linked_libraries(module))
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        def add(path: Path, arcname: str | None = None) -> None:
            tar.add(str(path.resolve()), arcname=(arcname or str(path)).lstrip("/"), recursive=True,
                    filter=lambda info: None if "/test/" in f"/{info.name}/" or "__pycache__" in info.name else info)
        add(_PYTHON, "usr/bin/python3")
        add(_STDLIB)
        for library in libraries:
            add(library, str(library))
            add(library, "usr" + str(library) if not str(library).startswith("/usr") else str(library))
        for directory in ("tmp", "box", "ctl", "etc", "proc", "dev"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if directory == "tmp" else 0o755
            tar.addfile(info)
    buffer.seek(0)
    repository, version = tag.split(":")
    docker_client.api.import_image_from_data(buffer.getvalue(), repository=repository, tag=version)
    return tag


class DockerServer:
    """One long-lived container running a sandbox role (zygote or judge) of server.py, connected
    back over a Unix socket. The socket lives in a 0700 directory owned by the container's own
    uid, and the first peer is accepted only if the kernel says (SO_PEERCRED) it is that uid and
    the container's own process, so no other local user can answer in its place."""

    def __init__(self, docker_client, role: str, uid: int, box: Path, workdir: Path, limits, cgroup_note: list[str]):
        from docker.types import Ulimit

        self.stderr_tail = ""
        directory = workdir / f"ctl-{role}"
        directory.mkdir(mode=0o700)
        os.chown(directory, uid, uid)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(directory / "ctl.sock"))
        os.chown(directory / "ctl.sock", uid, uid)
        os.chmod(directory / "ctl.sock", 0o600)
        listener.listen(1)
        listener.settimeout(limits.load_timeout_s + 10)
        self.container = docker_client.containers.create(
            IMAGE, ["/usr/bin/python3", "-I", "-S", "-B", "/box/server.py", role, "unix:/ctl/ctl.sock", "/tmp", "namespace"],
            network_disabled=True, ipc_mode="private", read_only=True, cap_drop=["ALL"],
            security_opt=["no-new-privileges", "seccomp=" + json.dumps(docker_seccomp_profile())],
            user=f"{uid}:{uid}", mem_limit=limits.memory_bytes, memswap_limit=limits.memory_bytes,
            pids_limit=limits.processes, working_dir="/tmp", environment={"PATH": "/usr/bin", "HOME": "/tmp"},
            tmpfs={"/tmp": f"size={limits.tmp_bytes},mode=1777"},
            volumes={str(box): {"bind": "/box", "mode": "ro"}, str(directory): {"bind": "/ctl", "mode": "rw"}},
            log_config={"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}},
            ulimits=[Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s),
                     Ulimit(name="fsize", soft=limits.file_bytes, hard=limits.file_bytes),
                     Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                     Ulimit(name="msgqueue", soft=0, hard=0),  # no POSIX message queue can be made at all
                     # RLIMIT_DATA counts anonymous memory: a big allocation raises MemoryError before the cgroup kills
                     Ulimit(name="data", soft=limits.memory_bytes, hard=limits.memory_bytes),
                     Ulimit(name="nproc", soft=limits.processes, hard=limits.processes)])
        cgroup_note[:] = [f"Docker cgroup per sandbox: memory {limits.memory_bytes >> 20} MiB, pids {limits.processes}"]
        try:
            self.container.start()
            self.container.reload()
            expected_pid = self.container.attrs["State"]["Pid"]
            self.control, _ = listener.accept()
            pid, peer_uid, _ = struct.unpack("3i", self.control.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                           struct.calcsize("3i")))
            if (pid, peer_uid) != (expected_pid, uid):
                self.control.close()
                raise ConnectionRefusedError(f"the sandbox socket was answered by pid {pid} uid {peer_uid}, "
                                             f"not the container (pid {expected_pid}, uid {uid})")
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()
        self.pid = expected_pid
        self.cgroup = Cgroup.of_process(expected_pid)

    def close(self) -> int | None:
        status = None
        try:
            self.container.kill()
        except Exception:  # already gone
            pass
        try:
            status = self.container.wait(timeout=10).get("StatusCode")
            self.stderr_tail = self.container.logs(stdout=True, stderr=True, tail=20)[-2000:].decode(errors="replace")
            self.container.remove(force=True)
        except Exception:  # best effort: never let cleanup hide the verdicts
            pass
        if hasattr(self, "control"):
            self.control.close()
        return status
