"""mini-swe-agent trajectories (`<instance>.traj.json`, `trajectory_format` `mini-swe-agent-1` or
`mini-swe-agent-1.1`): `info{exit_status, submission, model_stats, config{model{model_name}}}` and
`messages` in chat format. Each assistant message carries one shell action — the one fenced block
(` ```bash ` in 1, ` ```mswea_bash_command ` in 1.1, which also lists it in `extra.actions`) — and
the user message after it is what the harness saw: `<returncode>N</returncode>` and `<output>`, a
format error, or a timeout. The action whose output starts with `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`
submits (its reply is then the submission alone); it is one `complete` step. The verdict and the
per-test results (FAIL_TO_PASS and PASS_TO_PASS, each test once) come from SWE-bench's files where
the run keeps them (`swe_bench.py`: a `report.json` beside the file, a submission's
`logs/<instance>/report.json` or `results/results.json`); in a submission (`<submission>/trajs/…`)
the run is the submission."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from curriculab.analysis.ingest import swe_bench
from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    load_json,
    read_bytes,
    text_of,
    validation_failure,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.analysis.issues import IngestFailure, make_issue
from curriculab.trajectory.actions import NormalisedCall, normalise_shell
from curriculab.trajectory.model import Run, Task, TestResult, Trajectory
from curriculab.trajectory.vocabulary import Outcome

FORMAT = "mini-swe-agent"
AGENT = "mini-swe-agent"
SUBMIT_LINES = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
"""The first output line with which an action submits (1.x accepts both)."""

_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>|<output_head>\n?(.*?)</output_head>", re.DOTALL)
# An output too long for the harness: the agent saw its head, how much was cut, and its tail
_ELIDED = re.compile(
    r"</output_head>\s*<elided_chars>\s*(.*?)\s*</elided_chars>\s*<output_tail>\n?(.*?)</output_tail>", re.DOTALL
)
_TIMED_OUT = re.compile(r"timed out and has been killed")
_LIMITS = {"LimitsExceeded": "agent_timeout"}
"""Exit statuses that are the agent's own fault: it ran out of its step or cost budget."""


class MiniTraj(BaseModel):
    model_config = ConfigDict(extra="allow")

    info: dict[str, Any] = {}
    messages: list[dict[str, Any]]
    trajectory_format: str
    instance_id: str | None = None


def is_mini_swe_agent(data: bytes) -> bool:
    """Whether a JSON document is a mini-swe-agent trajectory (its `trajectory_format` says so)."""
    return b'"trajectory_format"' in data and b'"mini-swe-agent-1' in data


def _action(message: dict[str, Any]) -> str | None:
    """The one shell action of an assistant message, None where it holds none or several (a format error)."""
    extra = message.get("extra") or {}
    listed = [a.get("command") for a in extra.get("actions") or [] if isinstance(a, dict)]
    if len(listed) == 1 and isinstance(listed[0], str):
        return listed[0].strip()
    blocks = _BLOCK.findall(text_of(message.get("content")) or "")
    return blocks[0].strip() if len(blocks) == 1 else None


def _observation(message: dict[str, Any] | None) -> tuple[str | None, int | None, bool]:
    """(output, exit code, timed out) of the harness's reply to an action."""
    if message is None:
        return None, None, False
    text = text_of(message.get("content")) or ""
    extra = message.get("extra") or {}
    code = extra.get("returncode")
    if not isinstance(code, int):
        found = _RETURNCODE.search(text)
        code = int(found.group(1)) if found else None
    shown = _OUTPUT.search(text)
    output = (shown.group(1) if shown.group(1) is not None else shown.group(2)) if shown else text
    cut = _ELIDED.search(text) if shown and shown.group(1) is None else None
    if cut:  # kept as the agent saw it, marked cut (`looks_truncated`: "[... N characters")
        output = f"{output.rstrip()}\n[... {cut.group(1)}]\n{cut.group(2)}"
    return output, code, _TIMED_OUT.search(text) is not None


def _submits(action: str, output: str | None, code: int | None) -> bool:
    """Whether an action submitted: its output starts with the submit line (the harness then keeps
    the rest as the submission, and its reply is that text alone, with no return code)."""
    lines = (output or "").lstrip().splitlines()
    if lines and lines[0].strip() in SUBMIT_LINES:
        return code in (0, None)
    return code is None and any(line in action for line in SUBMIT_LINES)


def _model(info: dict[str, Any]) -> str | None:
    model = ((info.get("config") or {}).get("model") or {}) if isinstance(info.get("config"), dict) else {}
    name = model.get("model_name") if isinstance(model, dict) else None
    return str(name) if name else None


def read_traj_json(path: Path) -> UnitResult:
    out = UnitResult()
    data = read_bytes(path, FORMAT)
    raw = load_json(path, data, FORMAT)
    name = path.name.removesuffix(".json").removesuffix(".traj")
    try:
        doc = MiniTraj.model_validate(raw)
    except ValidationError as exc:
        raise validation_failure(path, exc, FORMAT, record=name) from None
    if not doc.trajectory_format.startswith("mini-swe-agent-1"):
        raise IngestFailure(
            make_issue(
                path,
                f"trajectory_format {doc.trajectory_format!r} is not mini-swe-agent-1 or -1.1",
                "Check the file's source, or pass another --format",
                record=name,
                field="trajectory_format",
                source_format=FORMAT,
            )
        )
    instance_id = doc.instance_id or name
    run_dir = swe_bench.run_dir(path, instance_id)
    run_id = run_dir.name
    trajectory_id = f"{run_id}/{instance_id}"
    builder = StepBuilder(path, instance_id, FORMAT, trajectory_id=trajectory_id)
    messages = doc.messages
    instruction = None
    k = 0
    while k < len(messages) and messages[k].get("role") in ("system", "user"):
        content = text_of(messages[k].get("content")) or ""
        builder.message(messages[k]["role"], content)
        if messages[k]["role"] == "user" and instruction is None:
            instruction = content
        k += 1
    for index in range(k, len(messages)):
        message = messages[index]
        if message.get("role") != "assistant":
            continue  # a reply: read with the action it answers
        reply = (
            messages[index + 1]
            if index + 1 < len(messages) and messages[index + 1].get("role") != "assistant"
            else None
        )
        action = _action(message)
        thought = text_of(message.get("content")) or ""
        if action is None:  # no single action: the harness answered with a format error
            builder.calls(
                [NormalisedCall("message", None, None)],
                tool_name=None,
                raw={"index": index},
                output=text_of(reply.get("content")) if reply else None,
                message=thought,
            )
            continue
        output, code, timed_out = _observation(reply)
        calls = (
            [NormalisedCall("complete", None, action)]
            if _submits(action, output, code)
            else normalise_shell(action) or [NormalisedCall("run", None, action)]
        )
        builder.calls(
            calls,
            tool_name="bash",
            raw={"index": index, "arguments": {"command": action}},
            output=output,
            message=thought,
            exit_code=code,
            tool_failed=True if timed_out else None,
        )
    out.issues.extend(builder.issues)
    info = doc.info
    stats = info.get("model_stats") or {}
    exit_status = str(info.get("exit_status") or "")
    harness_error = _LIMITS.get(exit_status)
    report = swe_bench.verdict(path, instance_id, FORMAT, out.issues)
    tests: list[TestResult] = []
    if report is not None:
        tests = report.tests
        outcome: Outcome | None = "passed" if report.resolved else "failed"
    else:
        outcome = "failed" if harness_error else None  # submitted, but no verdict to read here
    model = _model(info)
    traj = Trajectory(
        trajectory_id=trajectory_id,
        run_id=run_id,
        task_id=instance_id,
        model=model,
        outcome=outcome,
        harness_error=harness_error,
        input_tokens=stats.get("input_tokens") or stats.get("prompt_tokens"),
        output_tokens=stats.get("output_tokens") or stats.get("completion_tokens"),
        cost_usd=stats.get("instance_cost"),
        task=Task(task_id=instance_id, source="swe-bench", instruction=instruction),
        test_results=tests,
        run=Run(
            run_id=run_id,
            agent=AGENT,
            agent_version=str(info.get("mini_version") or "") or None,
            model=model,
            source_format=FORMAT,
            source_path=str(run_dir),
            config={"exit_status": exit_status} if exit_status else {},
        ),
    )
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), legacy_hash(data), steps=builder)
    return out
