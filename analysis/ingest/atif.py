"""ATIF (Agent Trajectory Interchange Format, v1.4 to v1.6) trajectories.

Validation runs on the file's own schema first, so an error names the ATIF field at fault
(`steps[3].step_id`), then the steps are normalised into canonical actions. A document whose values
all have their schema's types already (the usual case) is checked by hand on orjson's parse; any
other goes through the pydantic models, which coerce or refuse it: both give the same plain values.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curriculab.analysis.ingest.common import (
    StepBuilder, UnitResult, byte_hash, content_hash, fail, json_failure, make_issue, read_bytes, text_of, validation_failure,
)
from curriculab.taxonomy.actions import normalise_tool_call, observe
from curriculab.taxonomy.model import INT32_MAX, INT64_MAX, Run, Task, Trajectory

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


FAST_PATH = True
"""Read documents of the plain shape without pydantic (`_plain_document`); the differential test
turns it off to hold both paths to the same rows and the same quarantine."""

_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)?")
_SOURCES = frozenset({"system", "user", "agent"})


def parse_atif(path: Path, data: bytes, record: str | None = None) -> dict[str, Any]:
    """ATIF bytes as plain values (timestamps as datetimes, costs as floats); raise IngestFailure
    naming the field at fault. A document whose every value already has the schema's type is
    checked by hand; anything else (a coercion, a bad value, invalid JSON) goes through pydantic,
    which decides and names the error."""
    doc = _plain_document(data) if FAST_PATH else None
    if doc is None:
        try:
            doc = AtifTrajectory.model_validate_json(data).model_dump()
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                raise json_failure(path, data, ValueError(exc.errors()[0]["msg"]), FORMAT, record) from None
            raise validation_failure(path, exc, FORMAT, record) from None
    schema_version = doc["schema_version"]
    if not schema_version.upper().startswith("ATIF"):
        raise fail(path, f"schema_version is {schema_version!r}, not ATIF", "Pass the right --format for this file",
                   record=record, field="schema_version", source_format=FORMAT)
    version = _VERSION.fullmatch(schema_version)
    if version is None or version.group(1) != "1" or int(version.group(2)) > KNOWN_MINOR:
        raise fail(path, f"schema_version {schema_version!r} is not an ATIF version curriculab reads (ATIF-v1.0 to "
                   f"ATIF-v1.{KNOWN_MINOR})", "Convert the file to a supported ATIF version, or to curriculab JSONL "
                   "(docs/jsonl.md)", record=record, field="schema_version", source_format=FORMAT)
    return doc


def _plain_document(data: bytes) -> dict[str, Any] | None:
    """The parsed document when every field is exactly of its schema type (what pydantic would
    accept unchanged), with timestamps parsed and costs made floats; None sends it to pydantic."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not (type(doc) is dict and type(doc.get("schema_version")) is str and type(doc.get("session_id")) is str
            and _optional(doc, "notes", str) and _optional(doc, "extra", dict)):
        return None
    agent, steps = doc.get("agent"), doc.get("steps")
    if not (type(agent) is dict and type(agent.get("name")) is str and _optional(agent, "version", str)
            and _optional(agent, "model_name", str) and type(steps) is list):
        return None
    final = doc.get("final_metrics")
    if final is not None and not (type(final) is dict and _counts(final, _FINAL_COUNTS) and _cost(final, "total_cost_usd")):
        return None
    return doc if all(type(step) is dict and _plain_step(step) for step in steps) else None


_STEP_COUNTS = ("prompt_tokens", "completion_tokens", "cached_tokens")
_FINAL_COUNTS = ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps")


def _plain_step(step: dict[str, Any]) -> bool:
    step_id, source, message = step.get("step_id"), step.get("source"), step.get("message")
    if not (type(step_id) is int and 0 <= step_id <= INT32_MAX and type(source) is str and source in _SOURCES
            and (message is None or type(message) is str or type(message) is list) and _optional(step, "model_name", str)
            and _optional(step, "reasoning_content", str) and _optional(step, "extra", dict)):
        return False
    stamp = step.get("timestamp")
    if stamp is not None:
        if type(stamp) is not str or not _TIMESTAMP.fullmatch(stamp):
            return False
        try:
            step["timestamp"] = datetime.fromisoformat(stamp)
        except ValueError:
            return False
    metrics = step.get("metrics")
    if metrics is not None and not (type(metrics) is dict and _counts(metrics, _STEP_COUNTS) and _cost(metrics, "cost_usd")):
        return False
    calls = step.get("tool_calls")
    if calls is not None:
        if type(calls) is not list:
            return False
        for call in calls:
            if not (type(call) is dict and type(call.get("function_name")) is str and _optional(call, "tool_call_id", str)):
                return False
            arguments = call.get("arguments")
            if not (arguments is None or type(arguments) is dict or type(arguments) is str):
                return False
    observation = step.get("observation")
    if observation is not None:
        results = observation.get("results", []) if type(observation) is dict else None
        if type(results) is not list:
            return False
        for result in results:
            content = result.get("content") if type(result) is dict else 0
            if not ((content is None or type(content) is str or type(content) is list)
                    and _optional(result, "source_call_id", str)):
                return False
    return True


def _optional(parent: dict[str, Any], key: str, kind: type) -> bool:
    value = parent.get(key)
    return value is None or type(value) is kind


def _counts(parent: dict[str, Any], keys: tuple[str, ...]) -> bool:
    for key in keys:
        value = parent.get(key)
        if value is not None and not (type(value) is int and 0 <= value <= INT64_MAX):
            return False
    return True


def _cost(parent: dict[str, Any], key: str) -> bool:
    value = parent.get(key)
    if value is None:
        return True
    if not ((type(value) is float or type(value) is int) and 0 <= value < math.inf):
        return False
    parent[key] = float(value)  # pydantic's float
    return True


def _reported_failure(result: dict[str, Any] | None, step: dict[str, Any]) -> bool | None:
    """Claude Code's is_error, kept by Harbor in the result's or the step's extra."""
    for extra in (result.get("extra") if result else None, (step.get("extra") or {}).get("tool_result_metadata")):
        if isinstance(extra, dict) and extra.get("is_error") is not None:
            return bool(extra["is_error"])
    return None


def atif_steps(doc: dict[str, Any], path: Path, record: str, issues: list) -> tuple[list, int | None, int | None, float | None]:
    """Canonical steps and token/cost totals of a parsed ATIF trajectory (`parse_atif`), each tool
    call read by the agent's own tool table and output conventions (`taxonomy/agents.yaml`)."""
    agent = doc["agent"]["name"]
    builder = StepBuilder(path=path, record=record, source_format=FORMAT)
    prompt = completion = 0
    cost = 0.0
    seen_ids: set[int] = set()
    for k, step in enumerate(doc["steps"]):
        step_id, source, ts = step["step_id"], step["source"], step.get("timestamp")
        if step_id in seen_ids:
            raise fail(path, f"step_id {step_id} appears twice", "Number steps uniquely from 1",
                       record=record, field=f"steps[{k}].step_id", source_format=FORMAT)
        seen_ids.add(step_id)
        metrics = step.get("metrics")
        if metrics:
            prompt += metrics.get("prompt_tokens") or 0
            completion += metrics.get("completion_tokens") or 0
            cost += metrics.get("cost_usd") or 0.0
        message = text_of(step.get("message"))
        tool_calls = step.get("tool_calls")
        if source != "agent" or not tool_calls:
            builder.message(source, message, ts, action="message" if source == "agent" else None)
            continue
        results = (step.get("observation") or {}).get("results") or []
        by_call = {r.get("source_call_id"): text_of(r.get("content")) for r in results if r.get("source_call_id")}
        result_of = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
        unlinked = [text_of(r.get("content")) for r in results if not r.get("source_call_id")]
        for c, call in enumerate(tool_calls):
            call_id, function, arguments = call.get("tool_call_id"), call["function_name"], call.get("arguments")
            output = by_call.get(call_id) if call_id else None
            if output is None and unlinked:
                # Terminal screens often come back once per turn, without a call id.
                output = unlinked[c] if len(unlinked) == len(tool_calls) else (unlinked[-1] if c == len(tool_calls) - 1 else None)
            raw = {"step_id": step_id, "tool_call_id": call_id, "function_name": function, "arguments": arguments}
            seen = observe(agent, output)
            failed = _reported_failure(result_of.get(call_id), step)
            builder.calls(normalise_tool_call(function, arguments, agent), tool_name=function,
                          raw=raw, output=output, message=message if c == 0 else None, ts=ts,
                          call_id=f"{step_id}/{call_id or c}", exit_code=seen.exit_code,
                          tool_failed=failed if failed is not None else seen.failed)
    issues.extend(builder.issues)
    final = doc.get("final_metrics") or {}

    def total(key: str, summed: Any) -> Any:
        return final[key] if final.get(key) is not None else summed

    return (builder.steps, total("total_prompt_tokens", prompt or None), total("total_completion_tokens", completion or None),
            total("total_cost_usd", round(cost, 8) or None))


def model_name(doc: dict[str, Any]) -> str | None:
    return doc["agent"].get("model_name") or next((s.get("model_name") for s in doc["steps"] if s.get("model_name")), None)


def read_atif_file(path: Path, data: bytes | None = None) -> UnitResult:
    """A standalone ATIF file: one trajectory. Task and verdict come from `extra` when present."""
    out = UnitResult()
    data = read_bytes(path, FORMAT) if data is None else data
    doc = parse_atif(path, data)
    record, agent, steps_in = doc["session_id"], doc["agent"], doc["steps"]
    steps, input_tokens, output_tokens, cost = atif_steps(doc, path, record, out.issues)
    extra = doc.get("extra") or {}
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
    version = agent.get("version") if agent.get("version") not in (None, "", "unknown") else None
    traj = Trajectory(
        trajectory_id=record, run_id=run_id, task_id=str(task_id), model=model, outcome=outcome,
        reward=reward, input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost,
        started_at=steps_in[0].get("timestamp") if steps_in else None,
        ended_at=steps_in[-1].get("timestamp") if steps_in else None,
        task=Task(task_id=str(task_id)),
        run=Run(run_id=run_id, agent=agent["name"], agent_version=version, model=model, source_format=FORMAT,
                source_path=str(path.parent)),
    )
    traj.steps = steps
    out.batch.add_trajectory(traj, content_hash(data), FORMAT, str(path), byte_hash(data))
    return out
