"""Inspect AI eval logs (`.eval` and `.json`), read with inspect_ai's own `read_eval_log`.

inspect-ai is an optional extra (`pip install 'curriculab[inspect]'`); without it these files are
quarantined with a message that names the extra, and everything else still lands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    fail,
    make_issue,
    read_bytes,
    text_of,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.trajectory.actions import NormalisedCall, normalise_tool_call
from curriculab.trajectory.model import Run, Task, Trajectory

FORMAT = "inspect"
EXTRA_HINT = "Install the extra: pip install 'curriculab[inspect]'"


def read_eval(path: Path) -> UnitResult:
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise fail(
            path,
            "reading Inspect AI logs needs the inspect-ai package, which is not installed",
            EXTRA_HINT,
            source_format=FORMAT,
        ) from None
    data = read_bytes(path, FORMAT)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect raises many kinds; any of them means an unreadable log
        raise fail(
            path,
            f"inspect_ai could not read this log ({type(exc).__name__}: {str(exc)[:200]})",
            "Check it with `inspect log dump`, or re-run the eval",
            source_format=FORMAT,
        ) from None
    out = UnitResult()
    ev = log.eval
    run_id = ev.run_id or ev.eval_id
    to_float = value_to_float()
    run = Run(
        run_id=run_id,
        agent=f"inspect:{ev.task}",
        model=ev.model,
        dataset=getattr(ev.dataset, "name", None),
        source_format=FORMAT,
        source_path=str(path),
        started_at=ev.created,
        config={"task": ev.task, "task_id": ev.task_id, "status": log.status},
    )
    out.batch.add_run(run)
    if not log.samples:
        # a header-only or cancelled log is not an error, but it must not pass silently as "0 ingested"
        why = (
            f"the eval ended with status {log.status!r} before any sample was logged"
            if log.status != "success"
            else "the log holds a header only (no samples; written with --no-log-samples, or read header-only)"
        )
        out.issues.append(
            make_issue(
                path,
                f"no samples to ingest: {why}",
                "Re-run the eval with samples logged, or ignore this file",
                severity="warning",
                source_format=FORMAT,
            )
        )
    elif log.status != "success":
        out.issues.append(
            make_issue(
                path,
                f"the eval ended with status {log.status!r}; its {len(log.samples)} logged samples are ingested",
                "Nothing to do unless the missing samples matter",
                severity="warning",
                source_format=FORMAT,
            )
        )
    for sample in log.samples or []:
        record = f"{sample.id}/epoch {sample.epoch}"
        builder = StepBuilder(path, record, FORMAT, trajectory_id=f"{run_id}/{sample.id}/{sample.epoch}")
        pending: dict[str, tuple[int, dict]] = {}  # tool_call_id -> (the step that gets its output, its raw call)
        for message in sample.messages:
            role = message.role
            if role == "tool":
                index, raw = pending.pop(getattr(message, "tool_call_id", None) or "", (None, None))
                error = getattr(message, "error", None)
                output = (
                    f"{message.text}\n{getattr(error, 'message', error)}".strip() if error is not None else message.text
                )
                failure = (
                    {"error": {"type": getattr(error, "type", None), "message": getattr(error, "message", None)}}
                    if error is not None
                    else {}
                )
                if index is not None:  # a failed tool (timeout, permission, ...): an error was observed
                    builder.set_output(
                        index,
                        output,
                        tool_failed=True if error is not None else None,
                        raw={**raw, **failure} if error is not None else None,
                    )
                elif getattr(message, "function", None):
                    # a tool result whose call is not in the log: still the tool's step, with its error
                    calls = normalise_tool_call(message.function, {}, "inspect")
                    if calls[0].action is None:  # a shell tool whose command was not logged
                        calls = [NormalisedCall("run", None, None)]
                    builder.calls(
                        calls,
                        tool_name=message.function,
                        output=output,
                        call_id=message.tool_call_id,
                        raw={"function": message.function, **failure},
                        tool_failed=True if error is not None else None,
                    )
                else:
                    builder.message("env", message.text)
                continue
            calls = getattr(message, "tool_calls", None) or []
            if role != "assistant" or not calls:
                builder.message(
                    "agent" if role == "assistant" else role,
                    text_of(message.text),
                    action="message" if role == "assistant" else None,
                )
                continue
            for c, call in enumerate(calls):
                raw = {"id": call.id, "function": call.function, "arguments": call.arguments}
                builder.calls(
                    normalise_tool_call(call.function, call.arguments, "inspect"),
                    tool_name=call.function,
                    raw=raw,
                    output=None,
                    message=message.text if c == 0 else None,
                    call_id=call.id,
                )
                pending[call.id] = (len(builder.rows) - 1, raw)
        out.issues.extend(builder.issues)
        score = next(iter(sample.scores.values()), None) if sample.scores else None
        reward = float(to_float(score.value)) if score is not None and _scalar(score.value) else None
        error = sample.error is not None
        usage = list((sample.model_usage or {}).values())
        input_tokens = sum(u.input_tokens or 0 for u in usage) if usage else None
        output_tokens = sum(u.output_tokens or 0 for u in usage) if usage else None
        task_id = f"{ev.task}/{sample.id}"
        traj = Trajectory(
            trajectory_id=f"{run_id}/{sample.id}/{sample.epoch}",
            run_id=run_id,
            task_id=task_id,
            model=ev.model,
            attempt=sample.epoch - 1,
            outcome="error" if error else (None if reward is None else ("passed" if reward >= 1 else "failed")),
            reward=None if error else reward,
            harness_error="unknown_error" if error else None,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            started_at=getattr(sample, "started_at", None),
            ended_at=getattr(sample, "completed_at", None),
            task=Task(
                task_id=task_id, source=ev.task, instruction=sample.input if isinstance(sample.input, str) else None
            ),
        )
        identity = (data, str(sample.id).encode(), str(sample.epoch).encode())
        add_trajectory(
            out.batch, traj, content_hash(*identity), FORMAT, str(path), legacy_hash(*identity), steps=builder
        )
    return out


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))
