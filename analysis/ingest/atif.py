"""ATIF (Agent Trajectory Interchange Format, v1.4 to v1.6) trajectories.

Validation runs on the file's own schema first, so an error names the ATIF field at fault
(`steps[3].step_id`), then the steps are normalised into canonical actions.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curriculab.analysis.ingest.common import (
    StepBuilder, UnitResult, add_trajectory, byte_hash, content_hash, fail, make_issue, read_bytes,
    text_of, validation_failure,
)
from curriculab.trajectory.actions import agent_conventions
from curriculab.trajectory.model import INT32_MAX, INT64_MAX, Run, Task, Trajectory

FORMAT = "atif"
KNOWN_MINOR = 6
"""The newest ATIF v1 minor version curriculab has read (v1.6: content-part messages)."""
_VERSION = re.compile(r"ATIF-v(\d+)\.(\d+)(?:\.\d+)?", re.I)


class _Atif(BaseModel):
    model_config = ConfigDict(extra="allow")


class AtifToolCall(_Atif):
    tool_call_id: str | None = None
    function_name: str
    arguments: dict[str, Any] | str | None = None


class AtifResult(_Atif):
    source_call_id: str | None = None
    content: str | list[Any] | None = None


class AtifObservation(_Atif):
    results: list[AtifResult] = []


# Counts and costs are bounded where they are read, to what the store holds: a bad value is
# this file's problem, named by its field, never a failed write that costs other files.
Count = Annotated[int, Field(ge=0, le=INT64_MAX)]
Cost = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class AtifMetrics(_Atif):
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    cached_tokens: Count | None = None
    cost_usd: Cost | None = None


class AtifStep(_Atif):
    step_id: Annotated[int, Field(ge=0, le=INT32_MAX)]
    timestamp: datetime | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str | list[Any] | None = None
    reasoning_content: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: AtifObservation | None = None
    metrics: AtifMetrics | None = None
    extra: dict[str, Any] | None = None


class AtifAgent(_Atif):
    name: str
    version: str | None = None
    model_name: str | None = None


class AtifFinalMetrics(_Atif):
    total_prompt_tokens: Count | None = None
    total_completion_tokens: Count | None = None
    total_cached_tokens: Count | None = None
    total_cost_usd: Cost | None = None
    total_steps: Count | None = None


class AtifTrajectory(_Atif):
    schema_version: str
    session_id: str
    agent: AtifAgent
    steps: list[AtifStep]
    notes: str | None = None
    final_metrics: AtifFinalMetrics | None = None
    extra: dict[str, Any] | None = None


def parse_atif(path: Path, data: bytes, record: str | None = None) -> AtifTrajectory:
    """Validate ATIF bytes; raise IngestFailure naming the field at fault."""
    try:
        doc = AtifTrajectory.model_validate_json(data)
    except ValidationError as exc:
        raise validation_failure(path, exc, FORMAT, record, data=data) from None
    if not doc.schema_version.upper().startswith("ATIF"):
        raise fail(path, f"schema_version is {doc.schema_version!r}, not ATIF", "Pass the right --format for this file",
                   record=record, field="schema_version", source_format=FORMAT)
    version = _VERSION.fullmatch(doc.schema_version)
    if version is None or version.group(1) != "1" or int(version.group(2)) > KNOWN_MINOR:
        raise fail(path, f"schema_version {doc.schema_version!r} is not an ATIF version curriculab reads (ATIF-v1.0 to "
                   f"ATIF-v1.{KNOWN_MINOR})", "Convert the file to a supported ATIF version, or to curriculab JSONL "
                   "(docs/jsonl.md)", record=record, field="schema_version", source_format=FORMAT)
    return doc


def _reported_failure(result: AtifResult | None, step: AtifStep) -> bool | None:
    """Claude Code's is_error, kept by Harbor in the result's or the step's extra."""
    for extra in ((result.model_extra or {}).get("extra") if result else None, (step.extra or {}).get("tool_result_metadata")):
        if isinstance(extra, dict) and extra.get("is_error") is not None:
            return bool(extra["is_error"])
    return None


def atif_steps(doc: AtifTrajectory, path: Path, record: str, issues: list) -> tuple[list, int | None, int | None, float | None]:
    """Canonical steps and token/cost totals of an ATIF trajectory, each tool call read by the
    agent's own tool table and output conventions (`curriculab/trajectory/agents.yaml`)."""
    agent = agent_conventions(doc.agent.name)
    builder = StepBuilder(path=path, record=record, source_format=FORMAT)
    prompt = completion = 0
    cost = 0.0
    seen_ids: set[int] = set()
    for k, step in enumerate(doc.steps):
        if step.step_id in seen_ids:
            raise fail(path, f"step_id {step.step_id} appears twice", "Number steps uniquely from 1",
                       record=record, field=f"steps[{k}].step_id", source_format=FORMAT)
        seen_ids.add(step.step_id)
        if step.metrics:
            prompt += step.metrics.prompt_tokens or 0
            completion += step.metrics.completion_tokens or 0
            cost += step.metrics.cost_usd or 0.0
        message = text_of(step.message)
        if step.source != "agent" or not step.tool_calls:
            builder.message(step.source, message, step.timestamp, action="message" if step.source == "agent" else None)
            continue
        results = step.observation.results if step.observation else []
        by_call = {r.source_call_id: text_of(r.content) for r in results if r.source_call_id}
        result_of = {r.source_call_id: r for r in results if r.source_call_id}
        unlinked = [text_of(r.content) for r in results if not r.source_call_id]
        for c, call in enumerate(step.tool_calls):
            output = by_call.get(call.tool_call_id) if call.tool_call_id else None
            if output is None and unlinked:
                # Terminal screens often come back once per turn, without a call id.
                output = unlinked[c] if len(unlinked) == len(step.tool_calls) else (unlinked[-1] if c == len(step.tool_calls) - 1 else None)
            raw = {"step_id": step.step_id, "tool_call_id": call.tool_call_id, "function_name": call.function_name,
                   "arguments": call.arguments}
            seen = agent.observe(output)
            failed = _reported_failure(result_of.get(call.tool_call_id), step)
            builder.calls(agent.normalise(call.function_name, call.arguments), tool_name=call.function_name,
                          raw=raw, output=output, message=message if c == 0 else None, ts=step.timestamp,
                          call_id=f"{step.step_id}/{call.tool_call_id or c}", exit_code=seen.exit_code,
                          tool_failed=failed if failed is not None else seen.failed)
    issues.extend(builder.issues)
    fm = doc.final_metrics
    input_tokens = fm.total_prompt_tokens if fm and fm.total_prompt_tokens is not None else (prompt or None)
    output_tokens = fm.total_completion_tokens if fm and fm.total_completion_tokens is not None else (completion or None)
    total_cost = fm.total_cost_usd if fm and fm.total_cost_usd is not None else (round(cost, 8) or None)
    return builder.steps, input_tokens, output_tokens, total_cost


def model_name(doc: AtifTrajectory) -> str | None:
    return doc.agent.model_name or next((s.model_name for s in doc.steps if s.model_name), None)


def read_atif_file(path: Path, data: bytes | None = None) -> UnitResult:
    """A standalone ATIF file: one trajectory. Task and verdict come from `extra` when present."""
    out = UnitResult()
    data = read_bytes(path, FORMAT) if data is None else data
    doc = parse_atif(path, data)
    record = doc.session_id
    steps, input_tokens, output_tokens, cost = atif_steps(doc, path, record, out.issues)
    extra = doc.extra or {}
    task_id = extra.get("task_id") or extra.get("task_name")
    if not task_id:
        task_id = f"atif/{path.stem}"
        out.issues.append(make_issue(
            path, f"no task id in extra.task_id; stored the trajectory under task {task_id!r}",
            "Ingest the Harbor job directory instead, or add extra.task_id", record=record, field="extra.task_id",
            severity="warning", source_format=FORMAT))
    model = model_name(doc)
    run_id = str(extra.get("run_id") or f"atif:{path.parent.name}")
    reward = extra.get("reward")
    outcome = extra.get("outcome")
    if outcome is None and isinstance(reward, (int, float)):
        outcome = "passed" if reward >= 1 else "failed"
    version = doc.agent.version if doc.agent.version not in (None, "", "unknown") else None
    traj = Trajectory(
        trajectory_id=doc.session_id, run_id=run_id, task_id=str(task_id), model=model, outcome=outcome,
        reward=reward, input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost,
        started_at=doc.steps[0].timestamp if doc.steps else None, ended_at=doc.steps[-1].timestamp if doc.steps else None,
        task=Task(task_id=str(task_id)),
        run=Run(run_id=run_id, agent=doc.agent.name, agent_version=version, model=model, source_format=FORMAT,
                source_path=str(path.parent)),
    )
    traj.steps = steps
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), byte_hash(data))
    return out
