"""Older Terminus logs: `agent/trajectory.json` as a JSON list of `{episode, prompt, response}`.

Before ATIF, Harbor's Terminus wrote one entry per model turn: `prompt` is what the model saw
(the task first, then the terminal screen after the previous turn's commands) and `response` is
its raw answer, free text around a JSON object `{analysis, plan, commands: [{keystrokes,
duration}], task_complete}` (often in a ```json fence, sometimes after an earlier object such as
`{"load_skill": ...}`). The commands go through the same keystroke normaliser as Terminus-2's
`bash_command`; each turn's screen becomes the output of the previous turn's last command.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from curriculab.analysis.ingest.common import StepBuilder
from curriculab.trajectory.actions import NormalisedCall, normalise_tool_call

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def is_terminus_episodes(doc: Any) -> bool:
    """A JSON list whose items carry `prompt` and `response` (and usually `episode`)."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(item, dict) and "response" in item and "prompt" in item for item in doc)
    )


def _turn(response: str) -> dict[str, Any] | None:
    """The turn's command object: the last JSON object in the response that has `commands` or
    `task_complete`; None when there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(response)] or [response]
    for text in reversed(candidates):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            start, end = text.find("{"), text.rfind("}")
            if start < 0 or end <= start:
                continue
            try:
                value = json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                continue
        if isinstance(value, dict) and ("commands" in value or "task_complete" in value):
            return value
    return None


def terminus_episode_steps(
    episodes: list[dict[str, Any]], path: Path, record: str, issues: list
) -> tuple[StepBuilder, int]:
    """(canonical steps, number of turns) of an episode list."""
    builder = StepBuilder(path, record, "harbor")
    builder.message("user", str(episodes[0].get("prompt") or ""))
    for k, item in enumerate(episodes):
        if k > 0:  # this turn's prompt shows the screen the previous turn's commands left
            _attach_output(builder, f"episode-{k - 1}/", str(item.get("prompt") or ""))
        response = str(item.get("response") or "")
        turn = _turn(response)
        if turn is None:
            builder.message("agent", response, action="message")
            continue
        message = "\n".join(str(turn[key]) for key in ("analysis", "plan") if turn.get(key)) or None
        commands = [c for c in (turn.get("commands") or []) if isinstance(c, dict)]
        for c, command in enumerate(commands):
            keystrokes = str(command.get("keystrokes") or "")
            calls = normalise_tool_call("bash_command", {"keystrokes": keystrokes}, agent="terminus-2")
            builder.calls(
                calls,
                tool_name="bash_command",
                raw={"episode": item.get("episode"), "keystrokes": keystrokes, "duration": command.get("duration")},
                output=None,
                message=message if c == 0 else None,
                call_id=f"episode-{k}/{c}",
            )
        if not commands and message:
            builder.message("agent", message, action="message")
        if turn.get("task_complete") is True:
            builder.calls(
                [NormalisedCall("complete", None, "task_complete")],
                tool_name="task_complete",
                raw={"episode": item.get("episode"), "task_complete": True},
                output=None,
                call_id=f"episode-{k}/complete",
            )
    issues.extend(builder.issues)
    return builder, len(episodes)


def _attach_output(builder: StepBuilder, turn: str, screen: str) -> None:
    last = builder.last_action(turn)
    if last is not None and builder.output_of(last) is None:
        builder.set_output(last, screen)
