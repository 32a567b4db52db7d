"""The Docker backend's control socket (issue #13, item 9): containers cannot inherit a socket
pair, so each connects back to a listening socket; nobody else may answer in its place."""

import os
from pathlib import Path

import pytest

from curriculab.training.sandbox.docker_backend import client as docker_client
from curriculab.training.sandbox.runner import Limits, _docker_client

FAST = Limits(test_timeout_s=2.0, load_timeout_s=10.0, cpu_s=10, memory_bytes=512 << 20, file_bytes=1 << 20)


@pytest.fixture
def docker():
    if docker_client() is None:
        pytest.skip("no Docker daemon reachable: start dockerd (CI does) to test the Docker backend")
    return _docker_client()  # with the sandbox image imported


def test_the_docker_control_socket_admits_only_its_own_container(docker, tmp_path):
    from curriculab.training.sandbox import docker_backend
    from curriculab.training.sandbox.isolation import UidLease

    box = tmp_path / "box"
    box.mkdir()
    (box / "server.py").write_text(Path(docker_backend.__file__).with_name("server.py").read_text())
    os.chmod(tmp_path, 0o755)
    os.chmod(box, 0o755)
    lease = UidLease()
    try:
        server = docker_backend.DockerServer(docker, "judge", lease.uid, box, tmp_path, FAST, [])
        try:
            directory = tmp_path / "ctl-judge"
            assert (directory.stat().st_mode & 0o777, directory.stat().st_uid) == (0o700, lease.uid)
            assert (directory / "ctl.sock").stat().st_mode & 0o777 == 0o600
            assert server.pid > 0
        finally:
            server.close()
    finally:
        lease.close()


def test_a_stranger_who_connects_first_is_refused(docker, tmp_path, monkeypatch):
    import socket as _socket

    from curriculab.training.sandbox import docker_backend
    from curriculab.training.sandbox.isolation import UidLease

    box = tmp_path / "box"
    box.mkdir()
    (box / "server.py").write_text(Path(docker_backend.__file__).with_name("server.py").read_text())
    os.chmod(tmp_path, 0o755)
    os.chmod(box, 0o755)
    real_start = docker_backend.DockerServer.__init__
    stranger = []

    def connect_first(self, *args, **kwargs):  # root on this host races the container to the socket
        original_accept = _socket.socket.accept

        def accept(listener):
            intruder = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            intruder.connect(listener.getsockname())
            stranger.append(intruder)
            return original_accept(listener)

        monkeypatch.setattr(_socket.socket, "accept", accept)
        try:
            real_start(self, *args, **kwargs)
        finally:
            monkeypatch.setattr(_socket.socket, "accept", original_accept)

    monkeypatch.setattr(docker_backend.DockerServer, "__init__", connect_first)
    lease = UidLease()
    try:
        with pytest.raises(ConnectionRefusedError, match="not the container"):
            docker_backend.DockerServer(docker, "judge", lease.uid, box, tmp_path, FAST, [])
    finally:
        lease.close()
        for s in stranger:
            s.close()
