"""OpenHands trajectories: the event stream a session saves (the GUI's "export trajectory", the runtime's
`trajs/*.json`): a JSON list of events, or an object holding the list under `history` or
`trajectory`; and an evaluation's `output.jsonl`, one instance a line with its events under `history`
(2024's outputs keep them as `[action, observation]` pairs). An event is an action (`action`: message, run, run_ipython, read,
edit, write, browse, finish, think, ... with its `args`) or an observation (`observation`: run, read,
edit, error, ... with `content` and `extras`) whose `cause` is the id of the action it answers; `source`
is user, agent or environment. A run's exit status is `extras.metadata.exit_code` (-1 while a command
still runs: no status); the file editor's refusals ("ERROR:\nNo replacement was performed …") are
failures, as `error` observations are. Actions with no effect on the work (think, recall, condensation, agent-state
changes) are left out. A trajectory carries no verdict.

The Software Agent SDK (OpenHands V1, from late 2025; OpenHands/benchmarks' outputs) keeps the same
history in other words: each event has a `kind` (ActionEvent, ObservationEvent, MessageEvent,
AgentErrorEvent, ...), an action or observation is an object with its own `kind` (ExecuteBashAction
with its `command`, FileEditorAction, FinishAction; ExecuteBashObservation with its `output`,
`exit_code` and `metadata.exit_code`), and an observation names its action by `action_id`. Such
events are read through the event stream's words (`_from_sdk`), so both read alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    iso_time,
    jsonl_lines,
    read_bytes,
    text_of,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.analysis.issues import IngestFailure, make_issue
from curriculab.trajectory.actions import NormalisedCall, normalise_shell
from curriculab.trajectory.model import Run, Task, Trajectory

FORMAT = "openhands"
_QUIET = {"think", "recall", "condensation", "condensation_request", "change_agent_state", "null", "system"}
_QUIET |= {"pause", "resume", "stop", "start", "task_tracking", "loop_recovery"}
"""Actions that neither act on the work nor speak to the user."""


def is_event_list(head: bytes) -> bool:
    """Whether the start of a `.json` file is an OpenHands event stream: a list of events, each with
    its `source` and its `action` (or `observation`), or an object keeping one under `history`."""
    events = b'"source"' in head and (b'"action"' in head or b'"observation"' in head)
    return events and (head.lstrip().startswith(b"[") or b'"history"' in head)


def _obj(value: Any) -> dict[str, Any]:
    """An object of the log, or an empty one where it holds something else."""
    return value if isinstance(value, dict) else {}


def _events(document: Any) -> list[dict[str, Any]] | None:
    if isinstance(document, dict):
        document = document.get("history", document.get("trajectory"))
    if not isinstance(document, list):
        return None
    # evaluation outputs of 2024 keep the history as [action, observation] pairs
    flat = [e for item in document for e in (item if isinstance(item, list) else [item])]
    events = [e for e in flat if isinstance(e, dict)]
    if not any(isinstance(e.get("action"), dict) or isinstance(e.get("observation"), dict) for e in events):
        return events
    # an error event names no action, only the tool call the action made
    calls = {e.get("tool_call_id"): e.get("id") for e in events if e.get("kind") == "ActionEvent"}
    return [read for e in events if (read := _from_sdk(e, calls)) is not None]


_SDK_VERBS = {
    "ExecuteBashAction": "run",
    "TerminalAction": "run",
    "FileEditorAction": "edit",
    "StrReplaceEditorAction": "edit",
    "FinishAction": "finish",
    "ThinkAction": "think",
    "TaskTrackerAction": "task_tracking",
}
"""The SDK's action kinds in the event stream's verbs; a browser's actions are `browse`, the rest `other`."""
_SDK_ANSWERS = {"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"}


def _from_sdk(event: dict[str, Any], calls: dict[Any, Any]) -> dict[str, Any] | None:
    """An event of the Software Agent SDK in the event stream's shape; None for one that is no step
    (the system prompt, state updates, condensations)."""
    kind = event.get("kind")
    if kind == "MessageEvent":
        message = _obj(event.get("llm_message"))
        text = text_of(message.get("content"))
        return {
            "action": "message",
            "source": event.get("source"),
            "args": {"content": text},
            "timestamp": event.get("timestamp"),
        }
    if kind == "ActionEvent":
        action = _obj(event.get("action"))
        args = {k: v for k, v in action.items() if k != "kind"}
        name = str(action.get("kind") or "")
        verb = _SDK_VERBS.get(name) or ("browse" if name.startswith("Browser") else str(event.get("tool_name") or name))
        # what the agent said with the call; a finish says it in its message
        args["thought"] = text_of(event.get("thought")) or (args.get("message") if verb == "finish" else None)
        return {
            "id": event.get("id"),
            "source": "agent",
            "action": verb,
            "args": args,
            "timestamp": event.get("timestamp"),
            "tool_call_metadata": {"function_name": event.get("tool_name")},
        }
    if kind in _SDK_ANSWERS:
        observation = _obj(event.get("observation"))
        error = observation.get("error")  # a bash result's flag, or the file editor's message
        said = error if isinstance(error, str) and error else None
        failed = kind != "ObservationEvent" or error is True or observation.get("is_error") is True or said is not None
        if kind == "AgentErrorEvent":
            output = event.get("error")
        elif kind == "UserRejectObservation":
            output = f"Action rejected: {event.get('rejection_reason') or ''}"
        elif said is not None:  # the editor shows its error in place of its output
            output = said
        else:
            output = (
                observation["output"]
                if isinstance(observation.get("output"), str)
                else text_of(observation.get("content"))
            )
        status = observation.get("exit_code")
        if type(status) is not int and isinstance(observation.get("metadata"), dict):
            status = observation["metadata"].get("exit_code")
        return {
            "observation": "error" if failed else "run",
            "source": event.get("source"),
            "cause": event.get("action_id") or calls.get(event.get("tool_call_id")),
            "content": output,
            "extras": {"metadata": {"exit_code": status}},
        }
    return None


def _calls(action: str, args: dict[str, Any]) -> list[NormalisedCall]:
    """What one action did, in curriculab's vocabulary."""
    path = args.get("path")
    path = str(path) if path else None
    if action == "run":
        command = str(args.get("command") or "")
        if args.get("is_input") is True:  # keys sent to a command still running: no command of its own
            return [NormalisedCall("other", None, f"input {command}".strip())]
        return normalise_shell(command) or [NormalisedCall("run", None, command)]
    if action == "run_ipython":  # Python the agent ran: a program of unknown effect
        code = str(args.get("code") or "")
        return [NormalisedCall("run", None, f"ipython {code.splitlines()[0] if code else ''}".strip())]
    if action == "read":  # a partial view names its range: two views of different lines are not the same read
        window = args.get("view_range")
        return [NormalisedCall("read", path, f"read {path or ''}{f' {window}' if window else ''}".strip())]
    if action in ("edit", "write"):
        verb = args.get("command") or action
        if verb == "view":
            return [NormalisedCall("read", path, f"view {path or ''}".strip())]
        return [NormalisedCall("edit", path, f"{verb} {path or ''}".strip())]
    if action in ("browse", "browse_interactive"):
        target = args.get("url") or args.get("browser_actions") or ""
        return [NormalisedCall("read", None, f"browse {str(target)[:200]}".strip())]
    if action == "finish":
        return [NormalisedCall("complete", None, "finish")]
    return [NormalisedCall("other", None, f"{action} {orjson.dumps(args, default=str).decode()[:200]}")]


def read_file(path: Path) -> UnitResult:
    """An OpenHands file as `--format openhands` names it: an evaluation output (`.jsonl`) or an event stream."""
    return read_eval_output(path) if path.suffix == ".jsonl" else read_events(path)


def read_events(path: Path, data: bytes | None = None) -> UnitResult:
    """A saved event stream: one trajectory."""
    out = UnitResult()
    data = data if data is not None else read_bytes(path, FORMAT)
    record = path.stem
    try:
        events = _events(orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        raise IngestFailure(
            make_issue(path, f"not JSON ({exc})", "Export the trajectory again", record=record, source_format=FORMAT)
        ) from None
    if not events or not any(e.get("source") == "agent" for e in events):
        raise IngestFailure(
            make_issue(
                path,
                "no agent event: not an OpenHands trajectory",
                "Point at a saved event list (a JSON list of actions and observations)",
                record=record,
                source_format=FORMAT,
            )
        )
    _add(out, path, data, events, record, path.parent.name, f"{path.parent.name}/{record}")
    return out


def is_eval_output(head: bytes) -> bool:
    """Whether the start of a `.jsonl` file is an OpenHands evaluation output (one instance a line)."""
    return b'"history"' in head and b'"source"' in head and (b'"action"' in head or b'"observation"' in head)


def read_eval_output(path: Path) -> UnitResult:
    """An evaluation's `output.jsonl`: one instance a line, its events under `history` (the verdict, where
    there is one, comes from the benchmark's own report, not from this file)."""
    out = UnitResult()
    lines, skipped = jsonl_lines(path, read_bytes(path, FORMAT), FORMAT, "an OpenHands evaluation output")
    out.issues.extend(skipped)
    for number, line, instance in lines:
        record = str(instance.get("instance_id") or instance.get("id") or f"line-{number}")
        try:
            _add_instance(out, path, number, line, instance, record)
        except Exception as exc:  # noqa: BLE001 - a record this reader did not foresee never costs the file's others
            out.issues.append(
                make_issue(
                    path,
                    f"line {number} could not be read ({type(exc).__name__}: {exc}); skipped, the file's other records landed",
                    "Report this with the record attached; re-run with --format openhands on the file alone to see it",
                    record=f"{record} (line {number})",
                    source_format=FORMAT,
                )
            )
    return out


def _add_instance(out: UnitResult, path: Path, number: int, line: bytes, instance: dict[str, Any], record: str) -> None:
    events = _events(instance)
    if not events or not any(e.get("source") == "agent" for e in events):
        out.issues.append(
            make_issue(
                path,
                f"line {number} holds no agent event; skipped",
                "Check the evaluation output",
                record=f"line {number}",
                severity="warning",
                source_format=FORMAT,
            )
        )
        return
    # the SDK's records keep the task and the model beside the history, not in it
    metadata = _obj(instance.get("metadata"))
    llm = metadata.get("llm") or metadata.get("llm_config")
    model = llm.get("model") if isinstance(llm, dict) and isinstance(llm.get("model"), str) else None
    instruction = instance.get("instruction") if isinstance(instance.get("instruction"), str) else None
    _add(out, path, line, events, record, path.parent.name, f"{path.parent.name}/{record}", instruction, model)


def _add(
    out: UnitResult,
    path: Path,
    data: bytes,
    events: list[dict[str, Any]],
    record: str,
    run_id: str,
    trajectory_id: str,
    given_instruction: str | None = None,
    given_model: str | None = None,
) -> None:
    """One trajectory from its events; `given_*`: what the record says beside them, where they say none."""
    answers = {e.get("cause"): e for e in events if e.get("observation") and e.get("cause") is not None}
    builder = StepBuilder(path, record, FORMAT, trajectory_id=trajectory_id)
    instruction = model = None
    for event in events:
        action, source = event.get("action"), event.get("source")
        if not action or action in _QUIET:
            continue
        args = _obj(event.get("args"))
        ts = iso_time(event.get("timestamp"))
        metadata = _obj(event.get("tool_call_metadata"))
        if model is None and isinstance(metadata.get("model_response"), dict):
            model = metadata["model_response"].get("model")
        if action == "message":
            text = str(args.get("content") or event.get("message") or "")
            if source == "user" and text.strip():
                builder.message("user", text, ts)
                instruction = instruction or text
            elif source == "agent" and text.strip():
                builder.message("agent", text, ts, action="message")
            continue
        if source != "agent":
            continue
        answer = answers.get(event.get("id"))
        output = text_of(answer.get("content")) if answer is not None else None
        extras = _obj(answer.get("extras") if answer is not None else None)
        status = (extras.get("metadata") or {}).get("exit_code") if isinstance(extras.get("metadata"), dict) else None
        builder.calls(
            _calls(str(action), args),
            tool_name=metadata.get("function_name") or str(action),
            raw={
                "function_name": metadata.get("function_name"),
                "arguments": args,
                "action": action,
                "id": event.get("id"),
            },
            output=output,
            message=str(args.get("thought") or "") or None,
            ts=ts,
            exit_code=status if type(status) is int and status >= 0 else None,
            call_id=str(event.get("id")) if event.get("id") is not None else None,
            # a failure is an `error` observation, or the file editor's own refusal in an `edit`/`read` one
            tool_failed=True
            if answer is not None and (answer.get("observation") == "error" or (output or "").startswith("ERROR:"))
            else None,
        )
    out.issues.extend(builder.issues)
    instruction, model = instruction or given_instruction, model or given_model
    traj = Trajectory(
        trajectory_id=trajectory_id,
        run_id=run_id,
        task_id=record,
        model=model,
        outcome=None,  # an event stream has no verdict
        task=Task(task_id=record, source="openhands", instruction=instruction),
        run=Run(run_id=run_id, agent="openhands", model=model, source_format=FORMAT, source_path=str(path.parent)),
    )
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), legacy_hash(data), steps=builder)
