"""A trajectory's identity: the hash of its parsed content, and the raw-bytes hash that stores
written before it hold. Light on purpose: ingest asks which hashes a store holds before it loads
any importer."""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

import orjson

HASH_PREFIX = "c1:"
"""Marks a hash of parsed content; stores written before it hold hashes of raw bytes (no prefix)."""


READING = 4
"""The version of how importers read steps into actions, kept on every trajectory
(`trajectories.reading`). 2: the shell reading (`trajectory.shell`, tree-sitter's bash grammar).
3: what the agent saw kept (a call's status as the call's, its parts' unknown; Claude Code's
`Exit code N`; a Codex command that yielded given the status its polls showed; SWE-agent commands
its tool table does not know are `other`; SWE-bench submission verdicts; the agent's own start and
end; where its terminal is kept; an installed agent's steps read from its terminal where it prints
them in a known shape, `ingest.transcript`; a mini-swe-agent output the harness cut keeps its head,
the elided count and its tail, and is marked `output_truncated`). 4: OpenHands' Software Agent SDK
evaluation outputs (events with a `kind`, actions as objects) read as the older events are; keys
sent to a running command (`is_input`) are `other`, not a run.
A stored trajectory read by an older one is re-read by the next ingest of its files, its steps and
codes replaced, though its content is unchanged."""


def byte_hash(*parts: bytes) -> str:
    """The hash of raw bytes that stores before the canonical hash hold (accepted as unchanged)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


class LegacyHashes:
    """Whether readers compute `byte_hash` for the store being written. Ingest turns it off for a
    store that holds no raw-bytes hash (every store written since canonical hashes): computing it was
    a measurable share of reading a Harbor trial, for a comparison that could never match."""

    wanted: bool = True
    """Read by `legacy_hash` in the process that reads (a reader process sets it as it starts)."""


def legacy_hash(*parts: bytes) -> str | None:
    """`byte_hash(*parts)` where the store may hold one (`LegacyHashes.wanted`), else None."""
    return byte_hash(*parts) if LegacyHashes.wanted else None


def canonical_bytes(part: bytes) -> bytes:
    """JSON as sorted, compact JSON; any other text with its line ends normalised: so re-indenting a
    file or converting it to CRLF is not a change of content."""
    try:
        return orjson.dumps(orjson.loads(part), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        return part.replace(b"\r\n", b"\n")


class ParsedJson(NamedTuple):
    """A part the importer has parsed as JSON already: hashed from its value, not parsed again."""

    value: Any


def content_hash(*parts: bytes | ParsedJson) -> str:
    """The identity of a trajectory's content: a hash of its parsed parts."""
    return HASH_PREFIX + byte_hash(
        *(
            orjson.dumps(part.value, option=orjson.OPT_SORT_KEYS)
            if isinstance(part, ParsedJson)
            else canonical_bytes(part)
            for part in parts
        )
    )
