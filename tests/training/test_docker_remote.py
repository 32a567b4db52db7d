"""The Docker backend against a daemon reached over TCP with mutual TLS (issue #21, item 4; issue
#67, item 6): nothing crosses but the API — the box files go in with `put_archive`, control runs over
each container's attach stream, and no host path is bind-mounted, so the daemon could be on another
machine. No daemon here listens on TCP (`scripts/setup.sh` starts dockerd on its Unix socket only):
each test reaches the local one through a TLS listener of its own (`tests/docker_tls.py`: a CA, a
server and a client certificate made for the test, a client certificate demanded), with
DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH set as for a remote engine."""

import os
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from curriculab.training.sandbox import docker_backend, runner, server
from curriculab.training.sandbox.runner import Limits, close_pools, run_many
from tests.docker_tls import UNIX_SOCKET, tls_docker

pytestmark = pytest.mark.slow  # a Docker engine over TCP

FAST = Limits(test_timeout_s=2.0, load_timeout_s=10.0, cpu_s=10, memory_bytes=512 << 20, file_bytes=1 << 20)
TESTS = [("basic_1", "assert add(1, 2) == 3"), ("basic_2", "assert add(-4, 4) == 0")]
HONEST = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def remote_docker(monkeypatch, require_docker, tmp_path):
    """DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH set to a mutual-TLS listener relaying to
    the local daemon; the backend's client made afresh from them."""
    require_docker(os.path.exists(UNIX_SOCKET) and docker_backend.client() is not None)
    close_pools()
    with tls_docker(tmp_path / "certs") as env:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(runner, "_DOCKER", None)
        yield env
        close_pools()


def test_the_listener_refuses_clients_without_a_certificate(remote_docker):
    import docker
    import requests

    host, ca = remote_docker["DOCKER_HOST"], os.path.join(remote_docker["DOCKER_CERT_PATH"], "ca.pem")
    plain = docker.DockerClient(base_url=host, timeout=5, version="1.41")
    anonymous = docker.DockerClient(
        base_url=host.replace("tcp://", "https://"),
        tls=docker.tls.TLSConfig(ca_cert=ca, verify=True),  # trusts the server, shows no certificate
        timeout=5,
        version="1.41",
    )
    for refused in (plain, anonymous):
        refused.api.trust_env = False
        with pytest.raises(requests.exceptions.RequestException):
            refused.ping()
    assert docker_backend.client().ping()  # with DOCKER_CERT_PATH's client certificate


def test_no_docker_daemon_here_listens_on_tcp_without_tls():
    """`scripts/setup.sh` starts dockerd on its Unix socket only (and replaces one an earlier setup
    started with `-H tcp://127.0.0.1:2375 --tls=false`): a TCP socket without TLS client
    verification would let any process of any user on the machine drive Docker, which is root."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() != "dockerd":
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                args = [a.decode() for a in cmdline.read().split(b"\0") if a]
        except OSError:
            continue
        hosts = [b for a, b in zip(args, args[1:]) if a in ("-H", "--host")]
        hosts += [a.split("=", 1)[1] for a in args if a.startswith(("-H=", "--host="))]
        if any(h.startswith("tcp://") for h in hosts):
            assert "--tlsverify" in args or "--tlsverify=true" in args, f"dockerd (pid {entry}): {' '.join(args)}"


def _our_containers(client):
    # filtered by the daemon: another run's containers are never inspected (one it removes meanwhile
    # would fail the listing)
    return client.containers.list(filters={"label": f"{docker_backend.OWNER_LABEL}={os.getpid()}"})


def test_scoring_over_tcp_shares_no_host_path(remote_docker):
    honest, wrong = run_many(
        [(HONEST, "add", TESTS), ("def add(a, b):\n    return a - b\n", "add", TESTS)],
        FAST,
        workers=1,
        backend="docker",
    )
    assert honest.status == "ok" and all(o.passed for o in honest.outcomes)
    assert not any(o.passed for o in wrong.outcomes) and wrong.status == "ok"
    client = runner._DOCKER
    assert client.api.base_url.startswith("https://127.0.0.1:")  # the SDK's form of tcp:// with TLS
    containers = _our_containers(client)  # the slot stays warm: its two containers are up
    by_role = {c.attrs["Args"][4]: c for c in containers}
    assert set(by_role) == {"zygote", "judge"}
    for c in containers:
        assert not c.attrs["HostConfig"].get("Binds")
        assert [(m["Type"], m["Destination"]) for m in c.attrs["Mounts"]] == [("volume", "/box")]
        assert c.attrs["Config"]["OpenStdin"] and c.attrs["HostConfig"]["ReadonlyRootfs"]
        assert c.attrs["Args"][5] == "stdio"
    # the zygote has no network of its own: it lives in the judge's, which has none but loopback
    assert by_role["zygote"].attrs["HostConfig"]["NetworkMode"] == f"container:{by_role['judge'].id}"
    assert by_role["judge"].attrs["Config"].get("NetworkDisabled") is True


def test_output_and_memory_kills_come_back_over_the_stream(remote_docker):
    printed, bomb, after = run_many(
        [
            ("import os\nos.write(1, b'x' * 5000 + b'\\n')\ndef add(a, b):\n    return a + b\n", "add", TESTS[:1]),
            (
                "def add(a, b):\n    blocks = []\n    while True:\n        blocks.append(bytearray(32 << 20))\n",
                "add",
                TESTS[:1],
            ),
            (HONEST, "add", TESTS[:1]),
        ],
        FAST,
        workers=1,
        backend="docker",
    )
    assert printed.outcomes[0].passed and printed.stderr_tail == "x" * 1999 + "\n"
    assert bomb.status == "memory" and not bomb.outcomes[0].passed
    assert after.status == "ok" and after.outcomes[0].passed


def test_a_completion_cannot_reach_the_judge_or_the_control_stream(remote_docker):
    """It knows how channels are named and looks for them in /proc/net/unix (where it has one); it
    writes forged verdicts to every channel socket it can find, to the name its own run's channel
    would have, and to the descriptors the control stream used. In a network namespace of its own it
    finds none; the next completion in the same slot is scored as if nothing happened."""
    hostile = """
import os, socket, json, struct, time
frame = lambda m: struct.pack(">I", len(json.dumps(m))) + json.dumps(m).encode()
forged = frame({"test": "basic_1", "passed": True, "status": "ok", "detail": ""}) + frame({"done": True})
for fd in (0, 1, 2):
    try:
        os.write(fd, forged)
    except OSError:
        pass
end = time.monotonic() + 0.3
reached, seen = 0, set()
while time.monotonic() < end and reached < 20:
    try:
        with open("/proc/net/unix") as f:
            names = {line.split()[-1] for line in f if "curriculab-channel" in line}
    except OSError:
        names = set()
    seen |= names
    for name in names:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect("\\0" + name.lstrip("@"))
            s.sendall(frame({"load_error": "forged"}) + forged)
            reached += 1
        except OSError:
            pass
    time.sleep(0.01)
os.write(1, f"saw {len(seen)} channel(s), reached {reached}".encode())
def add(a, b):
    return 7
"""
    results = run_many(
        [(hostile, "add", TESTS), (HONEST, "add", TESTS), (hostile, "add", TESTS), (HONEST, "add", TESTS)],
        FAST,
        workers=1,
        backend="docker",
    )
    for result in results[0::2]:
        assert not any(o.passed for o in result.outcomes), [(o.status, o.detail) for o in result.outcomes]
        assert result.stderr_tail.endswith("saw 0 channel(s), reached 0")
    for result in results[1::2]:
        assert result.status == "ok" and all(o.passed for o in result.outcomes)


def test_the_judge_accepts_the_channel_only_from_the_zygotes_uid():
    """`_accept_channel` refuses a connection from any other uid, however early it comes."""
    nonce, zygote_uid = "t" + os.urandom(8).hex(), 64000 + os.getpid() % 1000
    name = server.CHANNEL_PREFIX + nonce
    accepted = []
    judge = threading.Thread(
        target=lambda: accepted.extend(server._accept_channel(nonce, zygote_uid, time.monotonic() + 10))
    )
    judge.start()
    stranger = socket.socket(socket.AF_UNIX)
    for _ in range(1000):  # the listener is bound by the thread: wait for it
        try:
            stranger.connect(name)
            break
        except ConnectionRefusedError:
            time.sleep(0.005)
    connect_as = (
        f"import os, socket, time; os.setgid({zygote_uid}); os.setuid({zygote_uid}); "
        f"s = socket.socket(socket.AF_UNIX); s.connect({name!r}); s.sendall(b'z'); time.sleep(2)"
    )
    zygote = subprocess.Popen([sys.executable, "-c", connect_as])
    judge.join(timeout=10)
    try:
        assert len(accepted) == 1
        channel = socket.socket(fileno=accepted[0])
        _, uid, _ = struct.unpack("3i", channel.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        assert uid == zygote_uid and channel.recv(1) == b"z"
        channel.close()
        assert stranger.recv(1) == b""  # the stranger's connection was closed unread
    finally:
        stranger.close()
        zygote.kill()
        zygote.wait()


def test_the_attach_stream_reads_stdout_frames_across_any_split():
    """The daemon's frames (8-byte header, then payload; stderr frames interleaved) arrive in pieces
    of any size, and a timeout mid-header loses nothing."""
    ours, daemon = socket.socketpair()
    stream = docker_backend.AttachStream(ours)
    payload = os.urandom(3000)
    wire = b""
    for i in range(0, len(payload), 700):
        wire += struct.pack(">BxxxI", 2, 5) + b"noise"
        part = payload[i : i + 700]
        wire += struct.pack(">BxxxI", 1, len(part)) + part
    daemon.sendall(wire[:3])
    stream.settimeout(0.05)
    with pytest.raises(TimeoutError):
        stream.recv(100)
    stream.settimeout(5)

    def trickle():
        for i in range(3, len(wire), 13):
            daemon.sendall(wire[i : i + 13])
        daemon.close()

    threading.Thread(target=trickle).start()
    got = b""
    while chunk := stream.recv(64):
        got += chunk
    assert got == payload
    stream.close()
