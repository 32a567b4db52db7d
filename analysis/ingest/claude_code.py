"""Claude Code session transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`): one JSON object a
line, `type` user / assistant / summary / file-history-snapshot / system; user and assistant lines
carry `message` (the API message: `content` as text or blocks), `sessionId`, `cwd`, `version`,
`timestamp`, `isSidechain`. An assistant line holds one content block (`text`, `thinking`,
`tool_use{id, name, input}`); the result of a call comes in a later user line as a `tool_result`
block (`tool_use_id`, `content`, `is_error`). Tool calls are read through Claude Code's table in
`trajectory/agents.yaml`. Sub-agents' lines (`isSidechain: true`) are their own work, left out of
the session's steps. A session carries no verdict.

A failed shell call's result is `is_error` with text that opens `Exit code N` (its status); a
successful one prints only its output (`toolUseResult.stdout`), so its status stays unknown. The
session is its own run, `claude-code/<sessionId>`, whatever folder holds the file: the session id is
the one the file is named by where its lines carry it (a resumed session copies earlier lines,
with the earlier id), else the last one its lines carry."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    iso_time,
    jsonl_objects,
    read_bytes,
    text_of,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.analysis.issues import IngestFailure, make_issue
from curriculab.trajectory.actions import agent_conventions
from curriculab.trajectory.model import Run, Task, Trajectory

FORMAT = "claude-code"
_EXIT_CODE = re.compile(r"\AExit code (-?\d+)\b")
"""How a failed Bash result opens (`is_error` true): `Exit code 127\n/bin/sh: …`."""
_TYPES = (b'"type":"user"', b'"type":"assistant"', b'"type":"summary"', b'"type":"file-history-snapshot"')


def is_transcript(head: bytes) -> bool:
    """Whether the start of a `.jsonl` file is a Claude Code transcript rather than curriculab JSONL."""
    return b'"sessionId"' in head and any(t in head for t in _TYPES) and b'"trajectory_id"' not in head


def _session_id(lines: list[dict[str, Any]], stem: str) -> str:
    """The session a transcript records, from its lines: the one the file is named by where a line
    carries it, else the last one any line carries, else the file's name."""
    ids = [str(r["sessionId"]) for r in lines if r.get("sessionId")]
    return stem if stem in ids else (ids[-1] if ids else stem)


def read_transcript(path: Path) -> UnitResult:
    out = UnitResult()
    data = read_bytes(path, FORMAT)
    lines, skipped = jsonl_objects(path, data, FORMAT, "a Claude Code transcript")
    out.issues.extend(skipped)
    session = _session_id(lines, path.stem)
    chat = [r for r in lines if r.get("type") in ("user", "assistant") and not r.get("isSidechain")]
    if not chat:
        raise IngestFailure(
            make_issue(
                path,
                "no user or assistant line: not a session transcript",
                "Point at a session's <sessionId>.jsonl, not a sub-agent's or a summary file",
                record=session,
                source_format=FORMAT,
            )
        )
    trajectory_id = run_id = f"claude-code/{session}"
    builder = StepBuilder(path, session, FORMAT, trajectory_id=trajectory_id)
    conventions = agent_conventions(FORMAT)
    calls_at: dict[str, int] = {}  # tool_use id -> the step its result belongs on
    instruction = model = version = None
    input_tokens = output_tokens = 0
    for record in chat:
        message = record.get("message") or {}
        content = message.get("content")
        ts = iso_time(record.get("timestamp"))
        version = version or record.get("version")
        if record["type"] == "user":
            blocks = content if isinstance(content, list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            for result in results:
                index = calls_at.get(str(result.get("tool_use_id")))
                if index is not None:
                    output = text_of(result.get("content")) or ""
                    failed = bool(result.get("is_error"))
                    status = _EXIT_CODE.match(output) if failed else None
                    builder.set_output(
                        index, output, tool_failed=failed, exit_code=int(status.group(1)) if status else None
                    )
            text = (text_of(content) or "") if not results else ""
            if text.strip():
                builder.message("user", text, ts)
                instruction = instruction or text
            continue
        model = model or message.get("model")
        usage = message.get("usage") or {}
        input_tokens += int(usage.get("input_tokens") or 0)
        output_tokens += int(usage.get("output_tokens") or 0)
        for block in content if isinstance(content, list) else [{"type": "text", "text": text_of(content) or ""}]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                builder.message("agent", str(block["text"]), ts, action="message")
            elif block.get("type") == "tool_use":
                name, arguments = block.get("name"), block.get("input") or {}
                call_id = str(block.get("id") or "")
                builder.calls(
                    conventions.normalise(name, arguments),
                    tool_name=name,
                    raw={"arguments": arguments, "id": call_id},
                    output=None,
                    ts=ts,
                    call_id=call_id or None,
                )
                calls_at[call_id] = len(builder.rows) - 1  # a shell line split in several: its last part
    out.issues.extend(builder.issues)
    traj = Trajectory(
        trajectory_id=trajectory_id,
        run_id=run_id,
        task_id=session,
        model=model,
        outcome=None,  # a session has no verdict
        input_tokens=input_tokens or None,
        output_tokens=output_tokens or None,
        task=Task(task_id=session, source="claude-code", instruction=instruction),
        run=Run(
            run_id=run_id,
            agent="claude-code",
            agent_version=str(version) if version else None,
            model=model,
            source_format=FORMAT,
            source_path=str(path),
            config={"cwd": next((r.get("cwd") for r in chat if r.get("cwd")), None)},
        ),
    )
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), legacy_hash(data), steps=builder)
    return out
