"""Harbor job directories: `<job>/<trial>/result.json` (TrialResult), `agent/trajectory.json`
(ATIF), `verifier/ctrf.json` (per-test results, when the verifier writes one; else another
`verifier/ctrf*.json`, such as `ctrf.redacted.json`), and the task's
`task.toml`, found through the trial config's task path."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from curriculab.analysis.ingest.atif import AtifRead, read_atif, read_continuation
from curriculab.analysis.ingest.common import (
    IngestFailure,
    StepBuilder,
    UnitResult,
    add_trajectory,
    fail,
    json_or_none,
    load_json,
    make_issue,
    milestones,
    outcome_without_verdict,
    read_bytes,
    read_if_regular,
    test_results_from_ctrf,
    validation_failure,
)
from curriculab.analysis.ingest.detect import other_verifier_reports
from curriculab.analysis.ingest.hashes import ParsedJson, content_hash, legacy_hash
from curriculab.analysis.ingest.tasks import task_from_toml
from curriculab.analysis.ingest.terminus import is_terminus_episodes, terminus_episode_steps
from curriculab.trajectory.model import Run, Task, Trajectory

FORMAT = "harbor"

# Harbor exception types that mean the infrastructure failed, not the agent.
HARNESS_ERROR_OF_EXCEPTION = {
    "AgentTimeoutError": "agent_timeout",
    "VerifierTimeoutError": "test_timeout",
    "AgentSetupTimeoutError": "install_failed",
    "AgentInstallationError": "install_failed",
    "EnvironmentStartTimeoutError": "environment_error",
    "EnvironmentBuildError": "environment_error",
    "DockerComposeError": "environment_error",
    "RewardFileNotFoundError": "missing_reward",
    "RewardFileEmptyError": "missing_reward",
    "VerifierOutputParseError": "parse_error",
    "NonZeroAgentExitCodeError": "agent_crashed",
    "EnvironmentError": "sandbox_error",  # curriculab's episodes: the sandbox or the judge failed
}
# Generic exception types (RuntimeError, TimeoutError, ...) named by what their message says.
HARNESS_ERROR_OF_MESSAGE: tuple[tuple[re.Pattern, str], ...] = (
    (
        re.compile(
            r"docker compose command failed|dockerfile parse error|failed to solve|image build|"
            r"environment .*(start|build)|no space left on device",
            re.I,
        ),
        "environment_error",
    ),
    (re.compile(r"agent.*(setup|install)|install(ation)? (script )?failed", re.I), "install_failed"),
    (re.compile(r"verifier.*time(d)? ?out|test.*time(d)? ?out", re.I), "test_timeout"),
    (re.compile(r"agent.*time(d)? ?out|timed out after", re.I), "agent_timeout"),
    (re.compile(r"reward(\.txt|\.json)? (file )?(not found|is empty|missing)|no reward", re.I), "missing_reward"),
    (re.compile(r"rate limit|429|overloaded|api (error|connection)", re.I), "model_api_error"),
)


def harness_error_of(exception_type: str, message: str | None) -> str:
    """The harness-error name for a Harbor exception: by type, else by what its message says."""
    if exception_type in HARNESS_ERROR_OF_EXCEPTION:
        return HARNESS_ERROR_OF_EXCEPTION[exception_type]
    for pattern, name in HARNESS_ERROR_OF_MESSAGE:
        if pattern.search(message or ""):
            return name
    return "unknown_error"


class _H(BaseModel):
    model_config = ConfigDict(extra="allow")


class ModelInfo(_H):
    name: str
    provider: str | None = None


class AgentInfo(_H):
    name: str
    version: str | None = None
    model_info: ModelInfo | None = None


class AgentResult(_H):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class VerifierResult(_H):
    rewards: dict[str, float | int | None] | None = None


class ExceptionInfo(_H):
    exception_type: str
    exception_message: str | None = None
    exception_traceback: str | None = None
    occurred_at: datetime | None = None


class Timing(_H):
    started_at: datetime | None = None
    finished_at: datetime | None = None


class TrialResult(_H):
    id: str | None = None
    task_name: str
    trial_name: str
    trial_uri: str | None = None
    task_id: dict[str, Any] | str | None = None
    source: str | None = None
    task_checksum: str | None = None
    config: dict[str, Any] = {}
    agent_info: AgentInfo
    agent_result: AgentResult | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    agent_execution: Timing | None = None


@functools.lru_cache(maxsize=4096)
def _find_task_dir(job_dir: Path, task_path: str) -> Path | None:
    """The task directory a trial of `job_dir` names, looked up only below the trial's own ancestors
    (its job's folder and four above it; cached per job, not per trial): an absolute path or one that
    climbs (`..`) is the machine the job ran on, not this input, and is never read."""
    candidate = Path(task_path)
    if candidate.is_absolute() or ".." in candidate.parts:
        return None
    for ancestor in [job_dir, *job_dir.parents][:5]:
        if (ancestor / candidate / "task.toml").is_file():
            return ancestor / candidate
    return None


@functools.lru_cache(maxsize=4096)
def _task(task_dir: Path, source: str | None) -> Task:
    return task_from_toml(task_dir, source)


def _reward(result: TrialResult) -> float | None:
    rewards = (result.verifier_result.rewards if result.verifier_result else None) or {}
    if "reward" in rewards and rewards["reward"] is not None:
        return float(rewards["reward"])
    values = [float(v) for v in rewards.values() if v is not None]
    return sum(values) / len(values) if values else None


def _trial_steps(path: str, data: bytes, record: str, issues: list) -> tuple[StepBuilder | None, AtifRead | None, Any]:
    """(steps, the ATIF reading, the parsed value) of a trial's agent/trajectory.json: ATIF, or an older
    Terminus episode list. Anything else costs the steps only: the trial keeps its verdict, tokens
    and tests, with a warning."""
    try:
        read = read_atif(path, data, record)
    except IngestFailure as exc:
        loaded = json_or_none(data)
        if is_terminus_episodes(loaded):
            steps, turns = terminus_episode_steps(loaded, path, record, issues)
            issues.append(
                make_issue(
                    path,
                    f"an older Terminus episode list ({turns} episodes), not ATIF: read its commands as steps",
                    "Nothing to do",
                    record=record,
                    severity="warning",
                    source_format=FORMAT,
                )
            )
            return steps, None, loaded
        problem = exc.issue.reason.removeprefix(f"{path}: record {record}: ").rsplit(". ", 1)[0]
        issues.append(
            make_issue(
                path,
                f"not ATIF: {_looks_like(loaded)} ({problem}); "
                "stored the trial's verdict, tokens and tests without steps",
                "Convert the trajectory to ATIF if its steps matter",
                record=record,
                severity="warning",
                source_format=FORMAT,
            )
        )
        return None, None, loaded
    issues.extend(read.steps.issues)
    return read.steps, read, read.parsed


def _continued(agent_dir: str, atif: AtifRead, record: str, issues: list, parts: list, hashed: list) -> AtifRead:
    """The trajectory followed through the segments it continues in (`continued_trajectory_ref`,
    a file beside it): their steps, totals, bytes and content. A segment that is missing or unread
    ends the trajectory there, with a warning: the steps before it stay."""
    names = {"trajectory.json"}
    ref = atif.doc.get("continued_trajectory_ref")
    while ref:
        # Only a file in the trial's own agent folder: the writer's absolute path is elsewhere now.
        name = os.path.basename(str(ref))
        path = os.path.join(agent_dir, name)
        if name in names:
            issues.append(
                make_issue(
                    path,
                    f"continued_trajectory_ref leads back to {name}; stored the steps up to it",
                    "Fix continued_trajectory_ref",
                    record=record,
                    field="continued_trajectory_ref",
                    severity="warning",
                    source_format=FORMAT,
                )
            )
            break
        names.add(name)
        known = len(atif.steps.issues)
        try:
            data = read_if_regular(path, FORMAT, record)
            if data is None:
                issues.append(
                    make_issue(
                        path,
                        "continued_trajectory_ref names this file, which is not there; stored the steps before it",
                        "Copy the trial's whole agent/ folder",
                        record=record,
                        field="continued_trajectory_ref",
                        severity="warning",
                        source_format=FORMAT,
                    )
                )
                break
            atif = read_continuation(atif, path, data)
        except IngestFailure as exc:
            problem = exc.issue.reason.removeprefix(f"{path}: record {record}: ").rsplit(". ", 1)[0]
            issues.append(
                make_issue(
                    path,
                    f"a continuation not read ({problem}); stored the steps before it",
                    "Fix or remove the file",
                    record=record,
                    severity="warning",
                    source_format=FORMAT,
                )
            )
            break
        issues.extend(atif.steps.issues[known:])
        parts.append(data)
        hashed.append(ParsedJson(atif.parsed) if atif.parsed is not None else data)
        ref = atif.doc.get("continued_trajectory_ref")
    return atif


def _looks_like(doc: Any) -> str:
    if doc is None:
        return "not JSON"
    if isinstance(doc, list):
        keys = sorted({k for item in doc[:5] if isinstance(item, dict) for k in item})
        return f"a JSON list of {len(doc)} items" + (f" with keys {', '.join(keys[:6])}" if keys else "")
    if isinstance(doc, dict):
        return f"a JSON object with keys {', '.join(sorted(doc)[:6])}"
    return f"a JSON {type(doc).__name__}"


def read_trial(trial_dir: Path) -> UnitResult:
    """One Harbor trial directory: one trajectory."""
    out = UnitResult()
    trial = str(trial_dir)  # the trial's files as strings: pathlib's joins were a tenth of reading its verdict
    result_path = os.path.join(trial, "result.json")
    result_bytes = read_bytes(result_path, FORMAT)
    raw = load_json(result_path, result_bytes, FORMAT)
    if not isinstance(raw, dict):
        raise fail(result_path, "result.json is not a JSON object", "Re-export the trial", source_format=FORMAT)
    try:
        result = TrialResult.model_validate(raw)
    except ValidationError as exc:
        raise validation_failure(result_path, exc, FORMAT, record=raw.get("trial_name") or trial_dir.name) from None
    record = result.trial_name
    parts = [result_bytes]  # raw, for the hash stores before canonical hashes hold
    hashed: list = [ParsedJson(raw)]

    steps = None
    input_tokens = output_tokens = cost = None
    model = result.agent_info.model_info.name if result.agent_info.model_info else None
    model = model or (result.config.get("agent") or {}).get("model_name")
    atif_path = os.path.join(trial, "agent", "trajectory.json")
    atif_bytes = read_if_regular(atif_path, FORMAT, record)
    if atif_bytes is not None:
        parts.append(atif_bytes)
        steps, atif, parsed = _trial_steps(atif_path, atif_bytes, record, out.issues)
        hashed.append(ParsedJson(parsed) if parsed is not None else atif_bytes)
        if atif is not None:
            atif = _continued(os.path.join(trial, "agent"), atif, record, out.issues, parts, hashed)
            input_tokens, output_tokens, cost = atif.input_tokens, atif.output_tokens, atif.cost_usd
            model = model or atif.model
    else:
        out.issues.append(
            make_issue(
                trial_dir,
                "no agent/trajectory.json; stored the trial's verdict and tokens without steps",
                "Re-run with an agent that writes ATIF if steps matter",
                record=record,
                field="agent/trajectory.json",
                severity="warning",
                source_format=FORMAT,
            )
        )

    test_results = []
    ctrf_path = os.path.join(trial, "verifier", "ctrf.json")
    ctrf_bytes = read_if_regular(ctrf_path, FORMAT, record)
    if ctrf_bytes is None and (others := other_verifier_reports(trial)):
        ctrf_path = os.path.join(trial, "verifier", others[0])
        ctrf_bytes = read_if_regular(ctrf_path, FORMAT, record)
    if ctrf_bytes is not None:
        parts.append(ctrf_bytes)
        ctrf = load_json(ctrf_path, ctrf_bytes, FORMAT, record)
        hashed.append(ParsedJson(ctrf))
        try:
            test_results = test_results_from_ctrf(ctrf)
        except (KeyError, TypeError, AttributeError, ValidationError) as exc:
            raise fail(
                ctrf_path,
                f"not a CTRF report ({type(exc).__name__}: {exc})",
                f"Fix or remove verifier/{os.path.basename(ctrf_path)}",
                record=record,
                field="results.tests",
                source_format=FORMAT,
            ) from None

    reward = _reward(result)
    harness_error = None
    if reward is not None:
        outcome = "passed" if reward >= 1.0 else "failed"
    elif result.exception_info is not None:
        harness_error = harness_error_of(result.exception_info.exception_type, result.exception_info.exception_message)
        outcome = outcome_without_verdict(harness_error)
    else:
        outcome = "error"
        harness_error = "parse_error"  # the verifier produced no reward at all

    if result.agent_result:
        input_tokens = (
            result.agent_result.n_input_tokens if result.agent_result.n_input_tokens is not None else input_tokens
        )
        output_tokens = (
            result.agent_result.n_output_tokens if result.agent_result.n_output_tokens is not None else output_tokens
        )
        cost = result.agent_result.cost_usd if result.agent_result.cost_usd is not None else cost

    task_cfg = result.config.get("task") or {}
    source = result.source or task_cfg.get("source")
    task_path = task_cfg.get("path") or (result.task_id.get("path") if isinstance(result.task_id, dict) else None)
    job_dir = trial_dir.parent
    task_dir = _find_task_dir(job_dir, str(task_path)) if task_path else None
    try:
        task = _task(task_dir, source) if task_dir else Task(task_id=result.task_name, source=source)
    except IngestFailure as exc:  # a bad task.toml must not cost the trial
        out.issues.append(replace(exc.issue, severity="warning"))
        task = Task(task_id=result.task_name, source=source)
    if task.task_id != result.task_name:
        task = task.model_copy(update={"task_id": result.task_name})
    m_passed, m_total = milestones(test_results, task.n_milestones)

    run_id = job_dir.name
    version = result.agent_info.version if result.agent_info.version not in (None, "", "unknown") else None
    run = Run(
        run_id=run_id,
        agent=result.agent_info.name,
        agent_version=version,
        model=model,
        dataset=source,
        source_format=FORMAT,
        source_path=str(job_dir),
        started_at=result.started_at,
        config={"job_id": result.config.get("job_id")} if result.config.get("job_id") else {},
    )
    traj = Trajectory(
        trajectory_id=result.trial_name,
        run_id=run_id,
        task_id=result.task_name,
        model=model,
        outcome=outcome,
        reward=reward,
        harness_error=harness_error,
        milestones_passed=m_passed,
        exception_type=result.exception_info.exception_type if result.exception_info else None,
        milestones_total=m_total,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        started_at=result.started_at,
        ended_at=result.finished_at,
        agent_started_at=result.agent_execution.started_at if result.agent_execution else None,
        agent_ended_at=result.agent_execution.finished_at if result.agent_execution else None,
        test_results=test_results,
        task=task,
        run=run,
    )
    add_trajectory(out.batch, traj, content_hash(*hashed), FORMAT, trial, legacy_hash(*parts), steps=steps)
    return out
