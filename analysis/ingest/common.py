"""Shared pieces of the importers: issues that name file, record and field; JSON loading with
clear errors; output capping; canonical step building (content hashes: `hashes.py`)."""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from curriculab.analysis.ingest.hashes import READING
from curriculab.analysis.issues import IngestFailure, Issue, fail, make_issue
from curriculab.analysis.store.rows import RowBatch, StepRow, TestResultRow, TrajectoryRow, as_utc, json_text
from curriculab.trajectory.actions import NormalisedCall, error_observed, folded_case, looks_truncated, read_is_full
from curriculab.trajectory.model import Step, TestResult, Trajectory
from curriculab.trajectory.model_names import canonical_model
from curriculab.trajectory.validation import first_problem
from curriculab.trajectory.vocabulary import AGENT_FAULTS, INT32_MAX, TIERS

MAX_OUTPUT_CHARS = 64 * 1024
"""Outputs longer than this keep their first and last halves; `output_truncated` is set."""


def outcome_without_verdict(harness_error: str | None) -> str:
    """`failed` for an agent's own fault, `error` for the infrastructure's."""
    return "failed" if harness_error in AGENT_FAULTS else "error"


MAX_INPUT_BYTES = 2 * 1024**3
"""Largest input file read; anything bigger is refused rather than read into memory."""


class FilesRead:
    """What the files a unit was read from looked like when they were opened: path -> (size,
    modification time in ns) from the reader's own `fstat`, or None for a file looked for and absent
    (or not a regular file). Ingest signs a Harbor trial with them, for free (`pipeline.unit_signature`)."""

    current: dict[str, tuple[int, int] | None] | None = None
    """The record being kept now, while a unit is read (`recording`); None otherwise."""

    @classmethod
    @contextmanager
    def recording(cls) -> Iterator[dict[str, tuple[int, int] | None]]:
        record: dict[str, tuple[int, int] | None] = {}
        cls.current = record
        try:
            yield record
        finally:
            cls.current = None


def read_bytes(path: Path, source_format: str, record: str | None = None) -> bytes:
    """A regular file's bytes, up to MAX_INPUT_BYTES; anything else is an issue that says so."""
    data = _read_regular(path, source_format, record, only_if_regular=False)
    assert data is not None  # only a file looked for if regular may be absent
    return data


def read_if_regular(path: Path | str, source_format: str, record: str | None = None) -> bytes | None:
    """A file's bytes if it is a regular file (what `Path.is_file` asks), else None; an unreadable or
    oversized one is an issue. One open, one fstat, one read: `is_file` then `read_bytes` cost two
    stats and pathlib's open besides, for each of a trial's files."""
    return _read_regular(path, source_format, record, only_if_regular=True)


_ABSENT_ERRORS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})


def _read_regular(path: Path | str, source_format: str, record: str | None, only_if_regular: bool) -> bytes | None:
    def cannot(exc: OSError) -> IngestFailure:
        return fail(
            path,
            f"cannot read file ({exc.strerror})",
            "Check that it exists and is readable",
            record=record,
            source_format=source_format,
        )

    def not_regular() -> bytes | None:
        if not only_if_regular:
            raise fail(
                path,
                "not a regular file (a FIFO, a device or a socket)",
                "Point at the file itself",
                record=record,
                source_format=source_format,
            )
        return None

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO is refused, never waited on
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket
            return not_regular()
        if only_if_regular and exc.errno in _ABSENT_ERRORS:
            if FilesRead.current is not None:
                FilesRead.current[str(path)] = None
            return None
        raise cannot(exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if FilesRead.current is not None:
                FilesRead.current[str(path)] = None
            return not_regular()
        if FilesRead.current is not None:
            FilesRead.current[str(path)] = (info.st_size, info.st_mtime_ns)
        if info.st_size > MAX_INPUT_BYTES:
            raise fail(
                path,
                f"{info.st_size:,} bytes, over the {MAX_INPUT_BYTES:,}-byte input limit",
                "Split the file",
                record=record,
                source_format=source_format,
            )
        # one read of the size fstat gave; only a file that is short of it or grew reads on to its end
        data = os.read(fd, info.st_size + 1)
        if len(data) != info.st_size:
            with io.FileIO(fd, closefd=False) as file:
                data += file.readall()
        return data
    except OSError as exc:
        raise cannot(exc) from None
    finally:
        os.close(fd)


def json_or_none(data: bytes) -> Any:
    """`data` parsed as JSON, or None where it is not JSON (the caller says what it is instead)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def load_json(path: Path, data: bytes, source_format: str, record: str | None = None) -> Any:
    """Parse JSON, turning every failure into an issue that says where and what to do."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise json_failure(path, data, exc, source_format, record) from None


BOM = b"\xef\xbb\xbf"


def json_failure(
    path: Path, data: bytes, exc: Exception, source_format: str, record: str | None = None
) -> IngestFailure:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return fail(
            path,
            f"not valid UTF-8 (byte {bad.start}: {data[bad.start : bad.start + 1]!r})",
            "Re-encode the file as UTF-8",
            record=record,
            source_format=source_format,
        )
    if not data.strip():
        return fail(path, "file is empty", "Remove it or re-export it", record=record, source_format=source_format)
    if data.startswith(BOM):
        return fail(
            path,
            "starts with a UTF-8 byte-order mark (BOM), which JSON does not allow",
            "Save the file as UTF-8 without a BOM",
            record=record,
            source_format=source_format,
        )
    message = (
        str(exc).split(":")[0] if isinstance(exc, orjson.JSONDecodeError) else str(exc).removeprefix("Invalid JSON: ")
    )
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "colno", None)
    at = f" at line {line} column {col}" if line else ""
    ends_early = (
        getattr(exc, "pos", -1) >= len(data.rstrip()) - 1 or "EOF while parsing" in message or "end of data" in message
    )
    truncated = " (the file looks truncated)" if ends_early else ""
    return fail(
        path,
        f"invalid JSON{at}: {message}{truncated}",
        "Re-export the file or fix it by hand",
        record=record,
        source_format=source_format,
    )


_RANGE_ERRORS = ("less_than_equal", "greater_than_equal", "finite_number", "less_than", "greater_than")


def validation_failure(
    path: Path | str,
    exc: ValidationError,
    source_format: str,
    record: str | None = None,
    prefix: str = "",
    data: bytes | None = None,
) -> IngestFailure:
    """Turn a pydantic error into an issue naming the first bad field and what it should be (or,
    validating `data` as JSON text, where the text stops being JSON)."""
    first = first_problem(exc)
    if first.kind == "json_invalid" and data is not None:
        return json_failure(Path(path), data, ValueError(first.message), source_format, record)
    shown = "" if first.kind == "missing" else f" (got {_short(first.value)})"
    extra = f"; {first.more} more problem(s) in this record" if first.more else ""
    fix = (
        "Add the field"
        if first.kind == "missing"
        else "The store cannot hold that value: fix it at its source (counts are whole numbers within 64 bits, steps and "
        "attempts within 32 bits, rewards and costs finite numbers)"
        if first.kind in _RANGE_ERRORS
        else "Fix the value to match the format's schema"
    )
    return fail(
        path,
        f"{first.message}{shown}{extra}",
        fix,
        record=record,
        field=(prefix + first.where) or None,
        source_format=source_format,
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def cap_text(text: str | None, limit: int = MAX_OUTPUT_CHARS) -> tuple[str | None, int]:
    """Return (text, chars dropped): long text keeps its head and tail."""
    if text is None or len(text) <= limit:
        return text, 0
    half = limit // 2
    dropped = len(text) - 2 * half
    return f"{text[:half]}\n[... curriculab: {dropped} characters omitted ...]\n{text[-half:]}", dropped


def cap_output(text: str | None, limit: int = MAX_OUTPUT_CHARS) -> tuple[str | None, bool, int]:
    """Return (text, truncated, chars dropped): `cap_text`, and whether the output was cut, by this
    cap or by the agent's harness before it (`looks_truncated`)."""
    capped, dropped = cap_text(text, limit)
    return capped, bool(dropped) or looks_truncated(text), dropped


def text_of(content: Any) -> str | None:
    """Text of a message or observation that may be a string or a list of content parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return str(content)


def jsonl_lines(
    path: Path, data: bytes, source_format: str, what: str
) -> tuple[list[tuple[int, bytes, dict[str, Any]]], list[Issue]]:
    """The JSON objects of a log kept one a line (an agent's session file, an evaluation's output), each
    with its line number and bytes, and a warning for each line that is not JSON (skipped: the rest of
    the file still reads). `what`: the format, as the fix names it."""
    objects, issues = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            issues.append(
                make_issue(
                    path,
                    f"line {number} is not JSON ({exc}); skipped",
                    f"Check that the file is {what}",
                    record=path.stem,
                    field=f"line {number}",
                    severity="warning",
                    source_format=source_format,
                )
            )
            continue
        if isinstance(record, dict):
            objects.append((number, line, record))
    return objects, issues


def jsonl_objects(path: Path, data: bytes, source_format: str, what: str) -> tuple[list[dict[str, Any]], list[Issue]]:
    """`jsonl_lines`' objects alone."""
    lines, issues = jsonl_lines(path, data, source_format, what)
    return [record for _, _, record in lines], issues


def iso_time(value: Any) -> datetime | None:
    """An agent log's ISO 8601 time (`2026-11-30T10:00:00.100Z`, with an offset or none); None where
    absent or in another form (a step's time is never worth refusing its log)."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


_step_row = tuple.__new__  # StepRow's values as a StepRow, without the named tuple's own __new__ (a Python call)


class StepBuilder:
    """Accumulates a trajectory's canonical steps as the store's step rows: numbered, outputs
    capped, each step's `error_observed` and `read_full` decided as it is added. No per-step model
    object: a row is what the store takes, and building a `Step` first was a fifth of reading."""

    __slots__ = ("path", "record", "source_format", "trajectory_id", "rows", "issues")

    def __init__(self, path: Path | str, record: str, source_format: str, trajectory_id: str | None = None):
        self.path, self.record, self.source_format = path, record, source_format
        self.trajectory_id = record if trajectory_id is None else trajectory_id
        """The trajectory the steps belong to (the record being read, unless it says otherwise)."""
        self.rows: list[StepRow] = []
        self.issues: list[Issue] = []

    def _capped_message(self, text: str | None, step_idx: int) -> str | None:
        text, dropped = cap_text(text)
        if dropped:
            self.issues.append(message_capped(self.path, self.record, step_idx, dropped, self.source_format))
        return text

    def message(self, source: str, text: str | None, ts: Any = None, action: str | None = None) -> None:
        step_idx = len(self.rows)
        if text is not None and len(text) > MAX_OUTPUT_CHARS:
            text = self._capped_message(text, step_idx)
        if ts is not None and ts.tzinfo is None:
            ts = as_utc(ts)
        self.rows.append(
            _step_row(
                StepRow,
                (
                    self.trajectory_id,
                    step_idx,
                    source,
                    text,
                    None,
                    action,
                    None,
                    None,
                    None,
                    None,
                    False,
                    None,
                    ts,
                    None,
                    None,
                    None,
                    None,
                    None,
                ),
            )
        )

    def calls(
        self,
        calls: list[NormalisedCall],
        *,
        tool_name: str | None,
        raw: dict[str, Any] | None,
        output: str | None,
        message: str | None = None,
        ts: Any = None,
        exit_code: int | None = None,
        source: str = "agent",
        call_id: str | None = None,
        tool_failed: bool | None = None,
    ) -> None:
        """Add the steps of one tool call. A call of one command keeps its output and status on its
        step. A call of several parts (a command line `a && b`, keystrokes, a script calling tools)
        has one output and one status for the whole line: the output goes on its last part (where
        the agent saw it, after the line ran), the status on every part as the call's
        (`call_exit_code`, `call_error`), and each part's own `exit_code` and `error_observed` are
        unknown (NULL): the log does not say which part failed."""
        rows = self.rows
        first = len(rows)
        last = len(calls) - 1
        truncated = False
        folded = None  # the output case-folded once, for both of its checks (the harness's cut, error text)
        if output:
            if len(output) > MAX_OUTPUT_CHARS:
                capped, dropped = cap_text(output)
                self.issues.append(
                    output_capped(self.path, self.record, first + last, dropped, self.source_format, "output")
                )
                output, truncated = capped or "", True
                folded = folded_case(output)
            else:
                folded = folded_case(output)
                truncated = looks_truncated(output, folded)
        if message is not None and len(message) > MAX_OUTPUT_CHARS:
            message = self._capped_message(message, first)
        if exit_code is not None and not -INT32_MAX - 1 <= exit_code <= INT32_MAX:
            exit_code = None  # no process exits so: the text that showed it was not a status line
        if ts is not None and ts.tzinfo is None:
            ts = as_utc(ts)
        call_id = call_id or f"step-{first}"
        arguments = raw.get("arguments") if raw is not None else None
        tid = self.trajectory_id
        call_error = _call_error(calls, output, exit_code, tool_failed, folded) if calls else None
        own_exit, own_error = (exit_code, call_error) if last == 0 else (None, None)
        for k, (action, path, command) in enumerate(calls):
            part_raw = None if raw is None else json_text(raw if last == 0 else {**raw, "part": k})
            ends = k == last  # the call's output goes on its last step
            rows.append(
                _step_row(
                    StepRow,
                    (
                        tid,
                        first + k,
                        source,
                        message if k == 0 else None,
                        tool_name,
                        action,
                        path,
                        command,
                        output if ends else None,
                        own_exit,
                        truncated if ends else False,
                        part_raw,
                        ts,
                        call_id,
                        own_error,
                        read_is_full(action, tool_name, command, arguments) if action == "read" else None,
                        exit_code,
                        call_error,
                    ),
                )
            )

    def call_range(self, index: int) -> range:
        """The steps of the call that step `index` belongs to (the parts sharing its `call_id`)."""
        call_id = self.rows[index].call_id
        if call_id is None:
            return range(index, index + 1)
        start, end = index, index
        while start > 0 and self.rows[start - 1].call_id == call_id:
            start -= 1
        while end + 1 < len(self.rows) and self.rows[end + 1].call_id == call_id:
            end += 1
        return range(start, end + 1)

    def set_output(
        self,
        index: int,
        output: str | None,
        tool_failed: bool | None = None,
        raw: dict[str, Any] | None = None,
        exit_code: int | None = None,
    ) -> None:
        """Give the call of step `index` an output that arrived after it (Inspect's tool message, a
        terminal screen shown with the next prompt, Claude Code's tool result), with its exit status
        where the result states one, on the call's last step, as `calls` places them; `raw`
        replaces that step's source record (a failed tool's error added to it)."""
        steps = self.call_range(index)
        end = steps[-1]
        row = self.rows[end]
        if exit_code is None:
            exit_code = row.call_exit_code  # a status read with the call (a format that prints it) stays
        parts = [NormalisedCall(self.rows[k].action, self.rows[k].path, self.rows[k].command) for k in steps]
        call_error = _call_error(parts, output, exit_code, tool_failed, None)
        alone = len(steps) == 1
        for k in steps:
            self.rows[k] = self.rows[k]._replace(call_exit_code=exit_code, call_error=call_error)
        self.rows[end] = self.rows[end]._replace(
            output=output,
            raw=row.raw if raw is None else json_text(raw),
            exit_code=exit_code if alone else None,
            error_observed=call_error if alone else None,
        )

    def link_status(self, index: int, exit_code: int) -> None:
        """Give the call of step `index` the exit status a later step showed (a Codex command that
        yielded and ended while the agent polled it): the status is the call's; its output stays
        where the agent saw it."""
        steps = self.call_range(index)
        end = steps[-1]
        parts = [NormalisedCall(self.rows[k].action, self.rows[k].path, self.rows[k].command) for k in steps]
        call_error = _call_error(parts, None, exit_code, None, None)
        alone = len(steps) == 1
        for k in steps:
            self.rows[k] = self.rows[k]._replace(call_exit_code=exit_code, call_error=call_error)
        if alone:
            self.rows[end] = self.rows[end]._replace(exit_code=exit_code, error_observed=call_error)

    def output_of(self, index: int) -> str | None:
        output: str | None = self.rows[index].output
        return output

    def last_action(self, call_id_prefix: str) -> int | None:
        """The last step that acts (not a message, completion or wait) of a call whose id starts with
        `call_id_prefix`, or None."""
        for index in range(len(self.rows) - 1, -1, -1):
            row = self.rows[index]
            if (row.call_id or "").startswith(call_id_prefix) and row.action not in (None, "message", "complete"):
                return index
        return None


def _call_error(
    calls: list[NormalisedCall],
    output: str | None,
    exit_code: int | None,
    tool_failed: bool | None,
    folded: str | None,
) -> bool | None:
    """Whether a call showed an error (`error_observed` of the call as a whole): read as a run where
    any of its parts runs, its status read against its last part's command (the status a command
    line returns is its last command's: `cd x && grep y` exiting 1 is grep finding nothing)."""
    runs = any(action == "run" for action, _, _ in calls)
    action = "run" if runs else calls[-1].action
    if not runs and not tool_failed:
        return None
    return error_observed(action, calls[-1].command, output, exit_code, tool_failed, folded)


def step_row(trajectory_id: str, step: Step) -> StepRow:
    """A canonical `Step` (read whole from curriculab JSONL) as the store's row, as `StepBuilder` makes it."""
    observed = error_observed(step.action, step.command, step.output, step.exit_code, step.tool_failed)
    full = read_is_full(step.action, step.tool_name, step.command, (step.raw or {}).get("arguments"))
    call_exit = step.exit_code if step.call_exit_code is None else step.call_exit_code
    call_error = (
        error_observed("run", step.command, step.output, call_exit, step.tool_failed)
        if step.action == "run" or call_exit is not None or step.tool_failed
        else None
    )
    return StepRow(
        trajectory_id,
        step.step_idx,
        step.source,
        step.message,
        step.tool_name,
        step.action,
        step.path,
        step.command,
        step.output,
        step.exit_code,
        step.output_truncated,
        json_text(step.raw),
        as_utc(step.ts),
        step.call_id,
        observed,
        full,
        call_exit,
        call_error,
    )


def output_capped(path: Path | str, record: str, step_idx: int, dropped: int, source_format: str, field: str) -> Issue:
    """The warning for a step output cut to its first and last halves."""
    return make_issue(
        path,
        f"step {step_idx} output has {dropped + MAX_OUTPUT_CHARS:,} characters; stored its first and "
        f"last {MAX_OUTPUT_CHARS // 2:,} (output_truncated = true)",
        "Nothing to do unless the middle of that output matters",
        record=record,
        field=field,
        severity="warning",
        source_format=source_format,
    )


def message_capped(path: Path | str, record: str, step_idx: int, dropped: int, source_format: str) -> Issue:
    """The warning for a step message cut to its first and last halves."""
    return make_issue(
        path,
        f"step {step_idx} message has {dropped + MAX_OUTPUT_CHARS:,} characters; stored its first and "
        f"last {MAX_OUTPUT_CHARS // 2:,}",
        "Nothing to do unless the middle of that message matters",
        record=record,
        field=f"steps[{step_idx}].message",
        severity="warning",
        source_format=source_format,
    )


def _message(message: Any, limit: int = 2000) -> str | None:
    return None if not isinstance(message, str) or not message else message[:limit]


def test_results_from_ctrf(doc: Any) -> list[TestResult]:
    """Per-test verdicts from a CTRF report (`results.tests[{name, status, extra}]`)."""
    tests = ((doc or {}).get("results") or {}).get("tests") or []
    results = []
    for test in tests:
        extra = test.get("extra") or {}
        tier = extra.get("tier")
        milestone = extra.get("milestone")
        results.append(
            TestResult(
                test_id=str(test["name"]),
                tier=tier if tier in TIERS else None,
                milestone_idx=milestone if isinstance(milestone, int) else None,
                passed=test.get("status") == "passed",
                status=str(test.get("status"))[:64] if test.get("status") is not None else None,
                detail=_message(test.get("message")),
            )
        )
    return results


def milestones(results: list[TestResult], declared: int | None = None) -> tuple[int | None, int | None]:
    """(milestones passed in order before the first failing one, milestones total)."""
    indexed = [r for r in results if r.milestone_idx is not None]
    if not indexed:
        return None, declared or None
    total = max(declared or 0, max(r.milestone_idx for r in indexed if r.milestone_idx is not None) + 1)
    passed = 0
    for m in range(total):
        group = [r for r in indexed if r.milestone_idx == m]
        if not group or not all(r.passed for r in group):
            break
        passed += 1
    return passed, total


def add_trajectory(
    batch: RowBatch,
    t: Trajectory,
    content_hash: str,
    source_format: str,
    source_path: str,
    legacy_hash: str | None = None,
    steps: StepBuilder | None = None,
) -> None:
    """Add a trajectory's rows to `batch`, normalised as the store holds them: the model's canonical
    name (the name read kept as `model_raw`) and each step's `error_observed` and `read_full`.
    `steps`: the builder that read its steps (else `t.steps`, canonical steps read whole).
    `legacy_hash` is the raw-bytes hash a store written before canonical hashes holds for it."""
    if legacy_hash is not None:
        batch.legacy_hashes[t.trajectory_id] = legacy_hash
    if t.task is not None:
        batch.add_task(t.task)
    if t.run is not None:
        batch.add_run(t.run)
    tid = t.trajectory_id
    if steps is not None and steps.trajectory_id != tid:
        raise ValueError(f"steps built for {steps.trajectory_id!r} added to trajectory {tid!r}")
    rows = steps.rows if steps is not None else [step_row(tid, s) for s in t.steps]
    batch.trajectories.append(
        TrajectoryRow(
            trajectory_id=tid,
            run_id=t.run_id,
            task_id=t.task_id,
            model=canonical_model(t.model),
            attempt=t.attempt,
            outcome=t.outcome,
            reward=t.reward,
            harness_error=t.harness_error,
            n_steps=len(rows),
            milestones_passed=t.milestones_passed,
            milestones_total=t.milestones_total,
            input_tokens=t.input_tokens,
            output_tokens=t.output_tokens,
            cost_usd=t.cost_usd,
            started_at=as_utc(t.started_at),
            ended_at=as_utc(t.ended_at),
            content_hash=content_hash,
            source_format=source_format,
            source_path=source_path,
            model_raw=t.model,
            actions_logged=t.actions_logged,
            exception_type=t.exception_type,
            reading=READING,
            agent_started_at=as_utc(t.agent_started_at),
            agent_ended_at=as_utc(t.agent_ended_at),
            recording=t.recording,
            panes=t.panes,
        )
    )
    batch.steps.extend(rows)
    batch.test_results.extend(
        TestResultRow(
            trajectory_id=tid,
            test_id=r.test_id,
            tier=r.tier,
            milestone_idx=r.milestone_idx,
            passed=r.passed,
            status=r.status,
            detail=r.detail,
        )
        for r in t.test_results
    )


@dataclass
class UnitResult:
    """What reading one input unit produced: rows to write and issues to record."""

    batch: RowBatch = field(default_factory=RowBatch)
    issues: list[Issue] = field(default_factory=list)
    tasks_only: int = 0
    """Task descriptions read (from task.toml / task.yaml) with no trajectory."""
