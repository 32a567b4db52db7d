"""Terminal-Bench 1.x run directories (`tb run` output).

`results.json` holds every trial; `run_metadata.json` the agent, model and dataset; each trial's
`<task>/<trial>/commands.txt` the commands the agent typed (no outputs: coders that need output
abstain on these). `is_resolved: null` means the harness failed: outcome `error`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from analysis.ingest.common import (
    IngestFailure, StepBuilder, UnitResult, content_hash, fail, load_json, read_bytes, validation_failure,
)
from taxonomy.actions import normalise_shell
from taxonomy.model import Run, Task, TestResult, Trajectory

FORMAT = "tb"

HARNESS_ERROR_OF_FAILURE_MODE = {
    "agent_timeout": "agent_timeout",
    "test_timeout": "test_timeout",
    "parse_error": "parse_error",
    "unknown_agent_error": "unknown_agent_error",
    "agent_installation_failed": "install_failed",
    "fatal_llm_parse_error": "parse_error",
    "context_length_exceeded": None,  # the agent's own doing, not the harness's
    "output_length_exceeded": None,
}


class TbTrial(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    trial_name: str
    task_id: str
    instruction: str | None = None
    is_resolved: bool | None = None
    failure_mode: str = "unset"
    parser_results: dict[str, Literal["passed", "failed"]] | None = None
    total_input_tokens: int | None = None
    total_output_tokens: int | None = None
    trial_started_at: datetime | None = None
    trial_ended_at: datetime | None = None


def is_run_dir(path: Path) -> bool:
    return (path / "results.json").is_file() and (path / "run_metadata.json").is_file()


def read_run(run_dir: Path) -> UnitResult:
    """One `tb run` directory: one trajectory per trial; a bad trial is quarantined alone."""
    out = UnitResult()
    results_path = run_dir / "results.json"
    doc = load_json(results_path, read_bytes(results_path, FORMAT), FORMAT)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise fail(results_path, "no `results` list", "Point at a `tb run` output directory", field="results",
                   source_format=FORMAT)
    meta_path = run_dir / "run_metadata.json"
    meta: dict[str, Any] = {}
    if meta_path.is_file():
        loaded = load_json(meta_path, read_bytes(meta_path, FORMAT), FORMAT)
        meta = loaded if isinstance(loaded, dict) else {}
    run_id = str(meta.get("run_id") or doc.get("id") or run_dir.name)
    model = meta.get("model_name")
    dataset = meta.get("dataset_name")
    run = Run(run_id=run_id, agent=meta.get("agent_name"), model=model, dataset=dataset, source_format=FORMAT,
              source_path=str(run_dir), started_at=meta.get("start_time"),
              config={k: meta[k] for k in ("n_attempts", "dataset_version", "n_concurrent_trials", "commit_hash") if k in meta})
    out.batch.add_run(run)
    attempts: dict[str, int] = {}
    for k, item in enumerate(doc["results"]):
        record = item.get("trial_name", f"results[{k}]") if isinstance(item, dict) else f"results[{k}]"
        try:
            trial = TbTrial.model_validate(item)
            out.batch.add_trajectory(*_trajectory(run_dir, run_id, model, dataset, trial, item, attempts, out))
        except ValidationError as exc:
            out.issues.append(validation_failure(results_path, exc, FORMAT, record=str(record), prefix=f"results[{k}].").issue)
        except IngestFailure as exc:
            out.issues.append(exc.issue)
    return out


def _trajectory(run_dir: Path, run_id: str, model: str | None, dataset: str | None, trial: TbTrial,
                item: dict, attempts: dict[str, int], out: UnitResult) -> tuple:
    commands_path = run_dir / trial.task_id / trial.trial_name / "commands.txt"
    commands = read_bytes(commands_path, FORMAT, trial.trial_name) if commands_path.is_file() else b""
    builder = StepBuilder(path=commands_path, record=trial.trial_name, source_format=FORMAT)
    if trial.instruction:
        builder.message("user", trial.instruction)
    for call in normalise_shell(commands.decode("utf-8", errors="replace")):
        builder.calls([call], tool_name="terminal", raw={"keystrokes": call.command}, output=None)
    out.issues.extend(builder.issues)
    outcome = {True: "passed", False: "failed", None: "error"}[trial.is_resolved]
    harness_error = HARNESS_ERROR_OF_FAILURE_MODE.get(trial.failure_mode, trial.failure_mode)
    if trial.failure_mode == "unset":
        harness_error = None
    if outcome == "error" and harness_error is None:
        harness_error = "unknown_error"
    tests = [TestResult(test_id=name, passed=status == "passed") for name, status in (trial.parser_results or {}).items()]
    attempt = attempts.get(trial.task_id, 0)
    attempts[trial.task_id] = attempt + 1
    traj = Trajectory(
        trajectory_id=f"{run_id}/{trial.trial_name}", run_id=run_id, task_id=trial.task_id, model=model,
        attempt=attempt, outcome=outcome, harness_error=harness_error,
        reward=None if trial.is_resolved is None else float(trial.is_resolved),
        input_tokens=trial.total_input_tokens, output_tokens=trial.total_output_tokens,
        started_at=trial.trial_started_at, ended_at=trial.trial_ended_at, test_results=tests,
        task=Task(task_id=trial.task_id, source=dataset, instruction=trial.instruction),
    )
    traj.steps = builder.steps
    digest = content_hash(orjson.dumps(item, option=orjson.OPT_SORT_KEYS), commands)
    return traj, digest, FORMAT, str(run_dir / trial.task_id / trial.trial_name)
