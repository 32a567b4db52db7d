"""ATIF (Agent Trajectory Interchange Format, v1.0 to v1.8) trajectories.

Two readings give the same rows. The plain reading walks orjson's values, checking each value's
type as it reads it; it takes a document only where every value already has its schema type (as
every exporter writes them). Anything else (a count given as a string, a rarer timestamp form, an
error) goes to the model path: the pydantic models below validate the file, so an error names the
ATIF field at fault (`steps[3].step_id`), and the model's values are walked the same way.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    fail,
    json_or_none,
    make_issue,
    read_bytes,
    text_of,
    validation_failure,
)
from curriculab.analysis.ingest.hashes import ParsedJson, content_hash, legacy_hash
from curriculab.analysis.issues import IngestFailure
from curriculab.trajectory.actions import agent_conventions, with_observed_changes
from curriculab.trajectory.model import INT32_MAX, INT64_MAX, Run, Task, Trajectory

FORMAT = "atif"
KNOWN_MINOR = 8
"""The newest ATIF v1 minor version curriculab reads. v1.6 added content-part messages; v1.7 a
per-document `trajectory_id` (with `session_id` optional) and embedded `subagent_trajectories`;
v1.8 audio content parts (no text, so nothing of them reaches a step)."""
_VERSION = re.compile(r"ATIF-v(\d+)\.(\d+)(?:\.\d+)?", re.I)


class _Atif(BaseModel):
    model_config = ConfigDict(extra="allow")


class AtifToolCall(_Atif):
    tool_call_id: str | None = None
    function_name: str
    arguments: dict[str, Any] | str | None = None


class AtifSubagentRef(_Atif):
    trajectory_id: str | None = None
    trajectory_path: str | None = None


class AtifResult(_Atif):
    source_call_id: str | None = None
    content: str | list[Any] | None = None
    subagent_trajectory_ref: list[AtifSubagentRef] | AtifSubagentRef | None = None


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
    is_copied_context: bool | None = None


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
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: AtifAgent
    steps: list[AtifStep]
    notes: str | None = None
    final_metrics: AtifFinalMetrics | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[AtifTrajectory] | None = None


class Unusual(Exception):
    """A value the plain reading does not take as it stands (a string for a number, a timestamp in
    a rarer form): the schema's own validation, the model path, decides what the document says."""


def parse_atif(path: Path, data: bytes, record: str | None = None) -> AtifTrajectory:
    """Validate ATIF bytes against the model; raise IngestFailure naming the field at fault."""
    try:
        doc = AtifTrajectory.model_validate_json(data)
    except ValidationError as exc:
        raise validation_failure(path, exc, FORMAT, record, data=data) from None
    _check_version(doc.schema_version, path, record)
    return doc


def _check_version(schema_version: str, path: Path, record: str | None) -> None:
    if not schema_version.upper().startswith("ATIF"):
        raise fail(
            path,
            f"schema_version is {schema_version!r}, not ATIF",
            "Pass the right --format for this file",
            record=record,
            field="schema_version",
            source_format=FORMAT,
        )
    version = _VERSION.fullmatch(schema_version)
    if version is None or version.group(1) != "1" or int(version.group(2)) > KNOWN_MINOR:
        raise fail(
            path,
            f"schema_version {schema_version!r} is not an ATIF version curriculab reads (ATIF-v1.0 to "
            f"ATIF-v1.{KNOWN_MINOR})",
            "Convert the file to a supported ATIF version, or to curriculab JSONL (docs/jsonl.md)",
            record=record,
            field="schema_version",
            source_format=FORMAT,
        )


@dataclass
class AtifRead:
    """What reading an ATIF document gave: the document as plain values, its canonical steps
    (`StepBuilder` rows) and the token and cost totals."""

    doc: dict[str, Any]
    """The document: orjson's values (the plain reading) or the validated model's dump."""
    parsed: Any
    """orjson's parse of the bytes, for the content hash (None where they are not JSON orjson reads)."""
    steps: StepBuilder
    """The steps as the store's rows, with the issues met building them."""
    input_tokens: int | None
    """`final_metrics.total_prompt_tokens`, else the steps' prompt tokens summed (None for none)."""
    output_tokens: int | None
    """`final_metrics.total_completion_tokens`, else the steps' completion tokens summed."""
    cost_usd: float | None
    """`final_metrics.total_cost_usd`, else the steps' costs summed."""

    @property
    def model(self) -> str | None:
        """The model that produced the steps: the agent's, else the first step's that names one."""
        named = (step["model_name"] for step in self.doc["steps"] if step.get("model_name"))
        return self.doc["agent"].get("model_name") or next(named, None)


PLAIN_READING = True
"""Read documents whose values already have the schema's types without the model (tests turn it off
to hold the two readings to each other)."""


def read_atif(path: Path | str, data: bytes, record: str | None = None, builder: StepBuilder | None = None) -> AtifRead:
    """Validate and walk ATIF bytes: the plain reading (orjson's values, each checked as it is read)
    where every value already has its schema type, else the model path (pydantic), whose errors name
    the field at fault. Both give the same rows: `tests/analysis/test_atif_paths.py` holds them equal.
    `builder`: the steps read so far, to add this document's to (a continuation's)."""
    parsed = json_or_none(data)
    kept = (len(builder.rows), len(builder.issues)) if builder is not None else (0, 0)
    try:
        if PLAIN_READING and type(parsed) is dict:
            try:
                _check_top(parsed)
                _check_version(parsed["schema_version"], path, record)
                return _walk(parsed, parsed, path, record or _document_id(parsed, path), builder)
            except (Unusual, IngestFailure):
                if builder is not None:  # a walk that stopped part way left rows behind
                    del builder.rows[kept[0] :], builder.issues[kept[1] :]
                # the model path decides what is wrong, and says it as it always has
        doc = parse_atif(path, data, record).model_dump()
        return _walk(doc, parsed, path, record or _document_id(doc, path), builder)
    except IngestFailure:
        if builder is not None:
            del builder.rows[kept[0] :], builder.issues[kept[1] :]
        raise


def read_continuation(previous: AtifRead, path: str, data: bytes) -> AtifRead:
    """The next segment of a trajectory split where its context was compacted
    (`continued_trajectory_ref`; Terminus-2 writes `trajectory.cont-N.json`): its steps follow the
    ones read, under the same record, the copied ones left out. Its `final_metrics` count the whole
    run so far (Terminus-2 writes them so); where it has none, its steps add to the totals before."""
    builder = previous.steps
    builder.path = path
    read = read_atif(path, data, builder.record, builder)
    declared = read.doc.get("final_metrics") or {}

    def total(name: str, this: Any, before: Any) -> Any:
        return this if declared.get(name) is not None or before is None else (this or 0) + before

    cost = total("total_cost_usd", read.cost_usd, previous.cost_usd)
    return replace(
        read,
        input_tokens=total("total_prompt_tokens", read.input_tokens, previous.input_tokens),
        output_tokens=total("total_completion_tokens", read.output_tokens, previous.output_tokens),
        cost_usd=round(cost, 8) if cost is not None else None,
    )


def _document_id(doc: dict, path: Path | str) -> str:
    """The trajectory a standalone document is: its `trajectory_id` (v1.7: one per document), else
    its `session_id` (a run's, which v1.7 lets documents share), else where it lies."""
    return doc.get("trajectory_id") or doc.get("session_id") or _unnamed_id(path)


def _unnamed_id(path: Path | str) -> str:
    """The id of a document that names itself neither way: its folder and file name."""
    path = Path(path)
    return f"atif:{path.parent.name}/{path.stem}"


def _optional(value: Any, kind: type) -> Any:
    if value is not None and type(value) is not kind:
        raise Unusual
    return value


def _count(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= INT64_MAX:
        raise Unusual
    return value


def _cost(value: Any) -> float | None:
    if value is None:
        return None
    if type(value) is not float or not 0 <= value < math.inf:
        raise Unusual
    return value


def _dict(value: Any) -> dict | None:
    if value is not None and type(value) is not dict:
        raise Unusual
    return value


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)?")


def _timestamp(value: Any) -> datetime | None:
    """A step's time: ISO 8601 in its common form (`2025-01-15T10:30:00.123Z`, an offset, or none),
    as the model reads it; any other form goes to the model path."""
    if value is None or type(value) is datetime:
        return value
    if type(value) is not str or _TIMESTAMP.fullmatch(value) is None:
        raise Unusual
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise Unusual from None


def _check_top(doc: dict) -> None:
    """The document's own fields (its steps are checked as they are walked)."""
    if type(doc.get("schema_version")) is not str:
        raise Unusual
    _optional(doc.get("session_id"), str)
    _optional(doc.get("trajectory_id"), str)
    agent = doc.get("agent")
    if type(agent) is not dict or type(agent.get("name")) is not str:
        raise Unusual
    _optional(agent.get("version"), str)
    _optional(agent.get("model_name"), str)
    if type(doc.get("steps")) is not list:
        raise Unusual
    _optional(doc.get("notes"), str)
    _dict(doc.get("extra"))
    metrics = _dict(doc.get("final_metrics"))
    if metrics:
        for name in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"):
            _count(metrics.get(name))
        _cost(metrics.get("total_cost_usd"))


_SOURCES = frozenset(("system", "user", "agent"))


def _text(value: Any) -> str | None:
    """A message or a tool result's content: a string, or v1.6's list of content parts."""
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is not list:
        raise Unusual
    return text_of(value)


def _reported_failure(result: dict | None, step: dict) -> bool | None:
    """Claude Code's is_error, kept by Harbor in the result's or the step's extra."""
    for extra in (result.get("extra") if result else None, (step.get("extra") or {}).get("tool_result_metadata")):
        if isinstance(extra, dict) and extra.get("is_error") is not None:
            return bool(extra["is_error"])
    return None


def _walk(doc: dict, parsed: Any, path: Path, record: str, builder: StepBuilder | None = None) -> AtifRead:
    """Canonical steps and token/cost totals of an ATIF document, each tool call read by the agent's
    own tool table and output conventions (`curriculab/trajectory/agents.yaml`). Every value read
    is checked against the schema's type on the way (`Unusual` where it is not as it stands)."""
    builder = builder if builder is not None else StepBuilder(path, record, FORMAT)
    summed = [0, 0, 0.0]  # the steps' prompt tokens, completion tokens and cost, subagents' included
    _walk_document(doc, builder, summed, "")
    prompt, completion, cost = summed
    fm = doc.get("final_metrics") or {}
    input_tokens = fm.get("total_prompt_tokens")
    output_tokens = fm.get("total_completion_tokens")
    total_cost = fm.get("total_cost_usd")
    return AtifRead(
        doc,
        parsed,
        builder,
        input_tokens if input_tokens is not None else (prompt or None),
        output_tokens if output_tokens is not None else (completion or None),
        total_cost if total_cost is not None else (round(cost, 8) or None),
    )


def _objects(value: Any) -> list[dict]:
    """A list of JSON objects (None: none)."""
    if value is None:
        return []
    if type(value) is not list or any(type(item) is not dict for item in value):
        raise Unusual
    return value


def _embedded(doc: dict) -> list[tuple[str | None, dict]]:
    """A document's embedded subagent trajectories (v1.7), each with its `trajectory_id`."""
    embedded = []
    for sub in _objects(doc.get("subagent_trajectories")):
        _check_top(sub)
        embedded.append((_optional(sub.get("trajectory_id"), str), sub))
    return embedded


def _delegated(result: dict) -> list[str]:
    """The embedded subagents a tool result names (`subagent_trajectory_ref`: a list, or one ref)."""
    refs = result.get("subagent_trajectory_ref")
    ids = []
    for ref in _objects([refs] if type(refs) is dict else refs):
        _optional(ref.get("trajectory_path"), str)
        if (trajectory_id := _optional(ref.get("trajectory_id"), str)) is not None:
            ids.append(trajectory_id)
    return ids


def _observed_changes(steps: list[Any]) -> set[str]:
    """Every file an environment saw the document's commands change (curriculab's episodes record
    them per command in `extra.commands[].changed`): what "running what was changed" is judged by."""
    changed: set[str] = set()
    for step in steps:
        commands = (_dict(step.get("extra")) or {}).get("commands") if type(step) is dict else None
        for command in commands if type(commands) is list else ():
            files = command.get("changed") if type(command) is dict else None
            if type(files) is list:
                changed.update(p for p in files if type(p) is str)
    return changed


def _walk_document(doc: dict, builder: StepBuilder, summed: list, prefix: str) -> None:
    """Add one document's steps to `builder`. An embedded subagent's steps follow the step that
    delegated to it (those no step names, the document's last), its call ids prefixed with its
    `trajectory_id`: its work is part of the attempt. Steps copied from an earlier trajectory for
    context (`is_copied_context`) are that trajectory's and are left out."""
    path, record = builder.path, builder.record
    agent = agent_conventions(doc["agent"]["name"])
    embedded = _embedded(doc)
    unwalked = dict(enumerate(embedded))
    seen_ids: set[int] = set()
    episode_changed = _observed_changes(doc["steps"])
    for k, step in enumerate(doc["steps"]):
        if type(step) is not dict:
            raise Unusual
        step_id, source = step.get("step_id"), step.get("source")
        if (
            type(step_id) is not int
            or not 0 <= step_id <= INT32_MAX
            or type(source) is not str
            or source not in _SOURCES
        ):
            raise Unusual
        if step_id in seen_ids:
            raise fail(
                path,
                f"{prefix and f'subagent {prefix[:-1]}: '}step_id {step_id} appears twice",
                "Number steps uniquely from 1",
                record=record,
                field=f"steps[{k}].step_id",
                source_format=FORMAT,
            )
        seen_ids.add(step_id)
        ts = _timestamp(step.get("timestamp"))
        _optional(step.get("model_name"), str)
        _optional(step.get("reasoning_content"), str)
        _dict(step.get("extra"))
        copied = step.get("is_copied_context")
        if copied is not None and type(copied) is not bool:
            raise Unusual
        metrics = _dict(step.get("metrics"))
        message = _text(step.get("message"))
        tool_calls = step.get("tool_calls")
        observation = _dict(step.get("observation"))
        results = observation.get("results", []) if observation else []
        if type(results) is not list:
            raise Unusual
        by_call, result_of, unlinked, delegated = {}, {}, [], []
        for result in results:
            if type(result) is not dict:
                raise Unusual
            call_id, content = _optional(result.get("source_call_id"), str), _text(result.get("content"))
            if call_id:
                by_call[call_id], result_of[call_id] = content, result
            else:
                unlinked.append(content)
            if result.get("subagent_trajectory_ref") is not None:
                delegated.extend(_delegated(result))
        if tool_calls is not None and type(tool_calls) is not list:
            raise Unusual
        observed = (_dict(step.get("extra")) or {}).get("commands")
        observed = observed if type(observed) is list else []
        if metrics:
            prompt, completion = _count(metrics.get("prompt_tokens")), _count(metrics.get("completion_tokens"))
            _count(metrics.get("cached_tokens"))
            cost = _cost(metrics.get("cost_usd"))
            if not copied:
                summed[0] += prompt or 0
                summed[1] += completion or 0
                summed[2] += cost or 0.0
        if copied:
            continue
        if source != "agent" or not tool_calls:
            builder.message(source, message, ts, action="message" if source == "agent" else None)
        else:
            for c, call in enumerate(tool_calls):
                if type(call) is not dict:
                    raise Unusual
                name, call_id, arguments = (
                    call.get("function_name"),
                    _optional(call.get("tool_call_id"), str),
                    call.get("arguments"),
                )
                if type(name) is not str or (
                    arguments is not None and type(arguments) is not dict and type(arguments) is not str
                ):
                    raise Unusual
                output = by_call.get(call_id) if call_id else None
                if output is None and unlinked:
                    # Terminal screens often come back once per turn, without a call id.
                    output = (
                        unlinked[c]
                        if len(unlinked) == len(tool_calls)
                        else (unlinked[-1] if c == len(tool_calls) - 1 else None)
                    )
                raw = {"step_id": step_id, "tool_call_id": call_id, "function_name": name, "arguments": arguments}
                calls = agent.normalise(name, arguments)
                if len(observed) == len(tool_calls) and type(observed[c]) is dict:
                    raw["observed"] = observed[c]  # what an environment saw the call do (its files changed)
                    changed = observed[c].get("changed")
                    if type(changed) is list and changed:
                        calls = with_observed_changes(calls, [str(p) for p in changed], episode_changed)
                seen = agent.observe(output)
                failed = _reported_failure(result_of.get(call_id), step)
                refused = agent.not_run(calls, output)
                if refused is not calls:  # the harness ran none of it: a failed call that changed nothing
                    calls, failed = refused, True
                builder.calls(
                    calls,
                    tool_name=name,
                    raw=raw,
                    output=output,
                    message=message if c == 0 else None,
                    ts=ts,
                    call_id=f"{prefix}{step_id}/{call_id or c}",
                    exit_code=seen.exit_code,
                    tool_failed=failed if failed is not None else seen.failed,
                )
        for trajectory_id in delegated:
            index = next((i for i, (sub_id, _) in unwalked.items() if sub_id == trajectory_id), None)
            if index is not None:
                _walk_document(unwalked.pop(index)[1], builder, summed, f"{prefix}{trajectory_id}:")
    for sub_id, sub in unwalked.values():
        _walk_document(sub, builder, summed, f"{prefix}{sub_id or 'subagent'}:")


def read_atif_file(path: Path, data: bytes | None = None) -> UnitResult:
    """A standalone ATIF file: one trajectory. Task and verdict come from `extra` when present."""
    out = UnitResult()
    data = read_bytes(path, FORMAT) if data is None else data
    read = read_atif(path, data)
    doc = read.doc
    record = read.steps.record
    out.issues.extend(read.steps.issues)
    if not (doc.get("trajectory_id") or doc.get("session_id")):
        out.issues.append(
            make_issue(
                path,
                f"no trajectory_id or session_id; stored the trajectory as {record!r}",
                "Add trajectory_id (ATIF v1.7) so the trajectory keeps its id wherever the file lies",
                record=record,
                field="trajectory_id",
                severity="warning",
                source_format=FORMAT,
            )
        )
    extra = doc.get("extra") or {}
    task_id = extra.get("task_id") or extra.get("task_name")
    if not task_id:
        task_id = f"atif/{path.stem}"
        out.issues.append(
            make_issue(
                path,
                f"no task id in extra.task_id; stored the trajectory under task {task_id!r}",
                "Ingest the Harbor job directory instead, or add extra.task_id",
                record=record,
                field="extra.task_id",
                severity="warning",
                source_format=FORMAT,
            )
        )
    model = read.model
    run_id = str(extra.get("run_id") or f"atif:{path.parent.name}")
    reward = extra.get("reward")
    outcome = extra.get("outcome")
    if outcome is None and isinstance(reward, (int, float)):
        outcome = "passed" if reward >= 1 else "failed"
    version = doc["agent"].get("version")
    version = version if version not in (None, "", "unknown") else None
    steps = [step for step in doc["steps"] if not step.get("is_copied_context")]  # its own
    traj = Trajectory(
        trajectory_id=record,
        run_id=run_id,
        task_id=str(task_id),
        model=model,
        outcome=outcome,
        reward=reward,
        input_tokens=read.input_tokens,
        output_tokens=read.output_tokens,
        cost_usd=read.cost_usd,
        started_at=_timestamp(steps[0].get("timestamp")) if steps else None,
        ended_at=_timestamp(steps[-1].get("timestamp")) if steps else None,
        task=Task(task_id=str(task_id)),
        run=Run(
            run_id=run_id,
            agent=doc["agent"]["name"],
            agent_version=version,
            model=model,
            source_format=FORMAT,
            source_path=str(path.parent),
        ),
    )
    digest = content_hash(ParsedJson(read.parsed) if read.parsed is not None else data)
    add_trajectory(out.batch, traj, digest, FORMAT, str(path), legacy_hash(data), steps=read.steps)
    return out
