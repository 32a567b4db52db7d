"""Ingest's file reading: one open per file, and the same answers `is_file` and pathlib gave."""

import os
import socket

import pytest

from curriculab.analysis.ingest.common import read_bytes, read_if_regular
from curriculab.analysis.issues import IngestFailure


def test_read_if_regular_reads_files_and_passes_over_everything_else(tmp_path):
    (tmp_path / "f.json").write_bytes(b'{"a": 1}')
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "dir.json").mkdir()
    os.mkfifo(tmp_path / "pipe.json")  # opening it for reading the usual way would block
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.json"))
        os.symlink(tmp_path / "loop", tmp_path / "loop")
        assert read_if_regular(tmp_path / "f.json", "harbor") == b'{"a": 1}'
        assert read_if_regular(tmp_path / "empty.json", "harbor") == b""
        big = os.urandom(3 << 20)
        (tmp_path / "big.json").write_bytes(big)
        assert read_if_regular(tmp_path / "big.json", "harbor") == big
        # a file whose size says 0 but which has content (procfs): read to its end, not to its size
        assert read_if_regular("/proc/self/status", "harbor").startswith(b"Name:")
        for name in ("missing.json", "dir.json", "pipe.json", "sock.json", "loop", "f.json/below"):
            assert read_if_regular(tmp_path / name, "harbor") is None, name
            assert (tmp_path / name).is_file() is False


def test_read_bytes_names_what_it_cannot_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "dir.json").mkdir()
    for name, reason in [
        ("pipe.json", "not a regular file (a FIFO, a device or a socket)"),
        ("dir.json", "not a regular file (a FIFO, a device or a socket)"),
        ("missing.json", "cannot read file (No such file or directory)"),
    ]:
        with pytest.raises(IngestFailure) as failure:
            read_bytes(tmp_path / name, "atif", record="r1")
        assert failure.value.issue.reason.startswith(f"{tmp_path / name}: record r1: {reason}"), (
            failure.value.issue.reason
        )


def test_a_part_parsed_already_hashes_as_its_bytes_do():
    import orjson

    from curriculab.analysis.ingest.hashes import ParsedJson, content_hash

    texts = [b'{"b": [1, 2.5, null], "a": {"z": "\\u00e9", "y": true}}', b'{\r\n  "a": 1\r\n}', b"[]", b'"x"', b"1e400"]
    for text in texts:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue  # not JSON: only ever hashed as bytes
        assert content_hash(ParsedJson(value), b"tail") == content_hash(text, b"tail"), text
    assert content_hash(ParsedJson({"a": 1})) != content_hash(ParsedJson({"a": 2}))
