"""Render a trajectory's steps as compact text for the classifier and the judge, plus the
structural features the classifier uses alongside the words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from curriculab.trajectory.actions import error_observed

_ACTIONS = ("read", "edit", "run", "complete", "message")
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]+\.py$|_test\.(py|go)$|\.(test|spec)\.[jt]sx?$")


def _short(text: str | None, limit: int) -> str:
    if not text:
        return ""
    text = text.strip()
    return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2 :]


def render(steps: Sequence[Mapping[str, Any]], output_chars: int = 300) -> str:
    """One line per step: `[idx] source action tool path: command` and the output under it."""
    lines = []
    for s in steps:
        head = f"[{s['step_idx']}] {s.get('source') or ''} {s.get('action') or '-'}"
        if s.get("tool_name"):
            head += f" ({s['tool_name']})"
        if s.get("path"):
            head += f" {s['path']}"
        body = s.get("command") or s.get("message") or ""
        lines.append(f"{head}: {_short(body, 300)}")
        if s.get("output"):
            lines.append(
                f"    -> {_short(s['output'], output_chars)}{' [truncated]' if s.get('output_truncated') else ''}"
            )
    return "\n".join(lines)


def structural_features(steps: Sequence[Mapping[str, Any]], harness_error: str | None) -> list[float]:
    """Counts and flags: agent steps, steps per action, errors seen, truncated outputs, repeated
    commands, repeated reads, ends on an edit, runs after the last edit, declared completion,
    harness error, tabs in a typed here-doc, edits to a test path."""
    agent = [s for s in steps if s.get("source") == "agent" and s.get("action")]
    counts = Counter(s["action"] for s in agent)
    commands = Counter(s.get("command") for s in agent if s.get("action") == "run" and s.get("command"))
    reads = Counter(s.get("path") for s in agent if s.get("action") == "read" and s.get("path"))
    edits = [i for i, s in enumerate(agent) if s["action"] == "edit"]
    last_edit = edits[-1] if edits else None
    runs_after = sum(1 for s in agent[last_edit + 1 :] if s["action"] == "run") if last_edit is not None else 0
    errors = sum(1 for s in agent if error_observed(s["action"], s.get("command"), s.get("output"), s.get("exit_code")))
    tabs = any("<<" in (s.get("command") or "") and "\t" in (s.get("command") or "") for s in agent)
    test_edits = any(s["action"] == "edit" and _TEST_PATH.search(s.get("path") or "") for s in agent)
    return [
        float(len(agent)),
        *(float(counts.get(a, 0)) for a in _ACTIONS),
        float(errors),
        float(sum(1 for s in agent if s.get("output_truncated"))),
        float(sum(n - 1 for n in commands.values() if n > 1)),
        float(sum(n - 1 for n in reads.values() if n > 1)),
        float(
            bool(agent)
            and agent[-1]["action"] == "edit"
            or (len(agent) > 1 and agent[-1]["action"] in ("complete", "message") and agent[-2]["action"] == "edit")
        ),
        float(runs_after),
        float(counts.get("complete", 0) > 0),
        float(harness_error is not None),
        float(tabs),
        float(test_edits),
    ]
