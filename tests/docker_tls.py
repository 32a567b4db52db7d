"""A Docker daemon reached over TCP with mutual TLS, made for a test or a benchmark: a CA, a server
and a client certificate (openssl, as Docker's own "Protect the Docker daemon socket" guide makes
them; the client's files named as `DOCKER_CERT_PATH` expects: ca.pem, cert.pem, key.pem), and a
TLS listener on 127.0.0.1 that demands a client certificate signed by that CA and relays each
connection, byte for byte, to the local daemon's Unix socket. So `scripts/setup.sh` starts dockerd
on its Unix socket only (no TCP port anyone on the machine could drive without a credential), and
the remote-daemon path is still tested over the network, as `DOCKER_HOST=tcp://…` with
`DOCKER_TLS_VERIFY=1` reaches a real remote engine.

    with tls_docker(folder) as env:   # DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH
        ...
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

UNIX_SOCKET = "/var/run/docker.sock"


def make_certificates(folder: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, in `folder` (made if
    missing). Returns `folder`: the client's DOCKER_CERT_PATH."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=curriculab test CA",
            "-keyout", "ca-key.pem", "-out", "ca.pem")  # fmt: skip
    for name, subject, usage in (
        ("server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"),
        ("client", "/CN=curriculab test client", "extendedKeyUsage=clientAuth\n"),
    ):
        (folder / f"{name}.ext").write_text(usage)
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", f"{name}-key.pem",
                "-out", f"{name}.csr")  # fmt: skip
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}-cert.pem")  # fmt: skip
    (folder / "cert.pem").write_bytes((folder / "client-cert.pem").read_bytes())
    (folder / "key.pem").write_bytes((folder / "client-key.pem").read_bytes())
    return folder


def _relay(client: ssl.SSLSocket, daemon: socket.socket) -> None:
    """Both directions of one connection on one thread (an SSL object is not for two threads at once)."""
    with selectors.DefaultSelector() as selector:
        selector.register(client, selectors.EVENT_READ, daemon)
        selector.register(daemon, selectors.EVENT_READ, client)
        open_ends = 2
        try:
            while open_ends:
                for key, _ in selector.select():
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    while True:
                        chunk = source.recv(1 << 16)
                        if not chunk:  # that side is done sending: pass the end on, keep reading the other
                            selector.unregister(source)
                            open_ends -= 1
                            if source is client:
                                daemon.shutdown(socket.SHUT_WR)
                            else:
                                open_ends = 0
                            break
                        key.data.sendall(chunk)
                        if not (isinstance(source, ssl.SSLSocket) and source.pending()):
                            break
        except OSError:
            pass
        finally:
            for end in (client, daemon):
                end.close()


@contextlib.contextmanager
def tls_listener(certificates: Path, unix_socket: str = UNIX_SOCKET) -> Iterator[str]:
    """A TLS listener on 127.0.0.1 (a free port) relaying to the daemon's `unix_socket`; a client
    without a certificate signed by the CA in `certificates` is refused in the handshake. Yields
    the address, `tcp://127.0.0.1:PORT`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(str(certificates / "ca.pem"))
    context.load_cert_chain(str(certificates / "server-cert.pem"), str(certificates / "server-key.pem"))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=handshake, args=(raw,), daemon=True).start()

    def handshake(raw: socket.socket) -> None:
        try:
            raw.settimeout(10)
            client = context.wrap_socket(raw, server_side=True)  # raises without a valid client certificate
            client.settimeout(None)
            daemon = socket.socket(socket.AF_UNIX)
            daemon.connect(unix_socket)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        _relay(client, daemon)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()


@contextlib.contextmanager
def tls_docker(folder: Path, unix_socket: str = UNIX_SOCKET) -> Iterator[dict[str, str]]:
    """Certificates in `folder` and a TLS listener; yields the environment a Docker client reads
    (`docker.from_env()`, the `docker` CLI): DOCKER_HOST, DOCKER_TLS_VERIFY=1, DOCKER_CERT_PATH."""
    certificates = make_certificates(folder)
    with tls_listener(certificates, unix_socket) as address:
        yield {"DOCKER_HOST": address, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": str(certificates)}
