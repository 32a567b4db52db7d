"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`): one JSON object a
line, `{"timestamp", "type", "payload"}`. `session_meta` opens the file (`id`, `cwd`, `cli_version`,
`originator`); `turn_context` names the model; `response_item` payloads are the conversation as the
Responses API holds it: `message` (role user / assistant / developer, `content` parts), `function_call`
(`name`, `arguments` as a JSON string, `call_id`), `custom_tool_call` (`name`, `input` text: a patch for
`apply_patch`, JavaScript for `exec`), `local_shell_call` (`action.command` as argv), each answered
later by a `*_output` item with the same `call_id`. `event_msg` lines repeat what the items say for
the UI (`agent_message`, `user_message`) and carry the running token counts (`token_count`).

A call's output is one text for the whole call (`Process exited with code N` in current builds, an
`{"output", "metadata": {"exit_code"}}` object in older ones; where the text prints none, the
`exec_command_end` event of the same `call_id` records it): the commands of one command line share
it, and no per-command status is recorded. The user messages Codex injects for itself (tagged blocks
such as `<environment_context>`, the AGENTS.md instructions) are not the task. A session carries no
verdict.

A command that outlives its wait yields: its output says `Process running with session ID N` and
what it printed so far; the agent then calls `write_stdin` with that `session_id` (empty `chars`: a
poll; text: input typed to the process), and each answer shows what the process printed since, until
one says `Process exited with code N`. That status is linked back to the command's steps (the
command's `exit_code` where it is one command, `call_exit_code` either way); every output stays on
the step where the agent saw it, so that the order of what was seen is kept. A poll is a `read` of
the running command's output (`write_stdin session N (<command>)`, `raw.polls` naming the
command's call); input typed to it is `other`.

The rollout is its own run, `codex/<id>` (the id `session_meta` gives), whatever folder holds it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

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
from curriculab.trajectory.actions import NormalisedCall, agent_conventions
from curriculab.trajectory.model import Run, Task, Trajectory

FORMAT = "codex-cli"
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
_RUNNING = re.compile(r"(?m)^Process running with session ID (\d+)\s*$")


def is_rollout(head: bytes) -> bool:
    """Whether the start of a `.jsonl` file is a Codex CLI rollout."""
    return b'"session_meta"' in head or (b'"response_item"' in head and b'"payload"' in head)


def _injected(content: Any) -> bool:
    """Whether a user message is context Codex wrote to itself: any part opening with a tag."""
    parts = content if isinstance(content, list) else [content]
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else part
        if isinstance(text, str) and (text.lstrip().startswith("<") or text.lstrip().startswith("# AGENTS.md")):
            return True
    return False


def _output(payload: dict[str, Any]) -> tuple[str, int | None]:
    """A call's output text and the exit status its record states (older builds' `metadata.exit_code`)."""
    output = payload.get("output")
    if isinstance(output, str) and output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            metadata = parsed.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return str(parsed.get("output") or ""), code if type(code) is int else None
    if isinstance(output, dict):
        return text_of(output.get("output") or output.get("content")) or "", None
    return text_of(output) or "", None


def _arguments(payload: dict[str, Any]) -> tuple[str, Any]:
    kind = payload.get("type")
    if kind == "local_shell_call":
        action = payload.get("action")
        return "local_shell", {"command": action.get("command") if isinstance(action, dict) else None}
    name = str(payload.get("name") or "")
    if kind == "custom_tool_call":
        return name, {"input": payload.get("input")}
    arguments = payload.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            arguments = {"input": arguments}
    return name, arguments if isinstance(arguments, dict) else {"input": arguments}


def _session_key(value: Any) -> str:
    """A process session id as the poll names it (`42`, `42.0`, `"42"`) and the yield prints it (`42`)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def read_rollout(path: Path) -> UnitResult:
    out = UnitResult()
    data = read_bytes(path, FORMAT)
    objects, skipped = jsonl_objects(path, data, FORMAT, "a Codex CLI rollout")
    out.issues.extend(skipped)
    lines = [r for r in objects if isinstance(r.get("payload"), dict)]
    meta: dict[str, Any] = next((r["payload"] for r in lines if r.get("type") == "session_meta"), {})
    session = str(meta.get("id") or path.stem)
    items = [r for r in lines if r.get("type") == "response_item"]
    if not items:
        raise IngestFailure(
            make_issue(
                path,
                "no response_item line: not a session rollout",
                "Point at a rollout-<time>-<id>.jsonl from ~/.codex/sessions",
                record=session,
                source_format=FORMAT,
            )
        )
    outputs = {str(r["payload"].get("call_id")): r["payload"] for r in items if r["payload"].get("type") in _OUTPUTS}
    # the status the harness recorded when a command ended (a yielded one too, under its own call id)
    ended = {
        str(r["payload"].get("call_id")): r["payload"]["exit_code"]
        for r in lines
        if r.get("type") == "event_msg"
        and r["payload"].get("type") == "exec_command_end"
        and type(r["payload"].get("exit_code")) is int
    }
    trajectory_id = run_id = f"codex/{session}"
    builder = StepBuilder(path, session, FORMAT, trajectory_id=trajectory_id)
    conventions = agent_conventions("codex")
    instruction = None
    sessions: dict[str, int] = {}  # a yielded command's session id -> its (last) step
    model = next((r["payload"].get("model") for r in lines if r.get("type") == "turn_context"), None)
    for record in items:
        payload, ts = record["payload"], iso_time(record.get("timestamp"))
        kind = payload.get("type")
        if kind == "message":
            role, content = payload.get("role"), payload.get("content")
            text = text_of(content) or ""
            if role == "user" and text.strip() and not _injected(content):
                builder.message("user", text, ts)
                instruction = instruction or text
            elif role == "assistant" and text.strip():
                builder.message("agent", text, ts, action="message")
        elif kind in _CALLS:
            name, arguments = _arguments(payload)
            call_id = str(payload.get("call_id") or payload.get("id") or "")
            answer = outputs.get(call_id)
            shown_text, exit_code = _output(answer) if answer is not None else (None, None)
            calls: list[NormalisedCall] = conventions.normalise(name, arguments)
            polled = sessions.get(_session_key(arguments.get("session_id"))) if name == "write_stdin" else None
            if polled is not None:  # a running command's output read (or input typed to it)
                shown = f"write_stdin session {arguments.get('session_id')} ({builder.rows[polled].command or ''})"
                calls = [NormalisedCall(action, None, shown[:300]) for action, _, _ in calls]
            refused = conventions.not_run(calls, shown_text)
            seen = conventions.observe(shown_text)
            status = exit_code if exit_code is not None else seen.exit_code
            if status is None and polled is None:
                status = ended.get(call_id)
            builder.calls(
                refused,
                tool_name=name,
                raw={"function_name": name, "arguments": arguments, "call_id": call_id}
                | ({"polls": builder.rows[polled].call_id} if polled is not None else {}),
                output=shown_text,
                ts=ts,
                exit_code=None if polled is not None else status,  # a poll's status is its command's
                call_id=call_id or None,
                tool_failed=True if refused is not calls else (None if polled is not None else seen.failed),
            )
            running = _RUNNING.search(shown_text or "") if polled is None else None
            if running:  # the command yielded: its polls say how it ends
                sessions[running.group(1)] = len(builder.rows) - 1
            elif polled is not None and status is not None:
                builder.link_status(polled, status)
    tokens = [
        r["payload"].get("info")
        for r in lines
        if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count"
    ]
    usage = next((t.get("total_token_usage") for t in reversed(tokens) if isinstance(t, dict)), None) or {}
    out.issues.extend(builder.issues)
    traj = Trajectory(
        trajectory_id=trajectory_id,
        run_id=run_id,
        task_id=session,
        model=model,
        outcome=None,  # a session has no verdict
        input_tokens=usage.get("input_tokens") or None,
        output_tokens=usage.get("output_tokens") or None,
        task=Task(task_id=session, source="codex-cli", instruction=instruction),
        run=Run(
            run_id=run_id,
            agent="codex",
            agent_version=str(meta.get("cli_version")) if meta.get("cli_version") else None,
            model=model,
            source_format=FORMAT,
            source_path=str(path),
            config={"cwd": meta.get("cwd"), "originator": meta.get("originator")},
        ),
    )
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), legacy_hash(data), steps=builder)
    return out
