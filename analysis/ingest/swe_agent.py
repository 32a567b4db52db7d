"""SWE-agent `.traj` files: `trajectory[{action, observation, thought, response, state}]`,
`history`, `info{exit_status, submission, model_stats}`, and in newer ones `replay_config` (the
model's name). Every edit names its file (the one `open` or `create` opened, or the state's);
its tools' refusals are errors on any step kind; `find_file`/`search_dir` are reads; `submit`
keeps what it submitted; the model comes from the file or SWE-agent's own run-folder name, never
another folder's name.

A `.traj` carries no verdict: SWE-bench's files supply it where the run keeps them (`swe_bench.py`:
the run folder's `results.json` or `report.json` with `resolved_ids`, a submission's
`logs/<instance>/report.json` with per-test results, or its `results/results.json`); in a
submission (`<submission>/trajs/…`) the run is the submission.

Commands an agent adds to SWE-agent's interface (documented in its prompt as `name:` with a
`signature:`, as SWE-agent writes them) that the tool table does not know are `other` steps, one
each, their multi-line arguments included: neither a change nor a check. The table maps them
(`agents.yaml`, `swe-agent.tools`, or a file of one's own named by $CURRICULAB_AGENT_TOOLS).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from curriculab.analysis.ingest import swe_bench
from curriculab.analysis.ingest.common import (
    StepBuilder,
    UnitResult,
    add_trajectory,
    load_json,
    read_bytes,
    validation_failure,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.trajectory.actions import (
    interface_commands,
    normalise_swe_agent_action,
    swe_agent_failed,
    swe_agent_open_file,
)
from curriculab.trajectory.model import Run, Task, Trajectory
from curriculab.trajectory.vocabulary import Outcome

FORMAT = "swe-agent"

# exit statuses that mean the harness, not the agent, ended the attempt
_HARNESS_EXITS = {
    "exit_error": "unknown_agent_error",
    "exit_environment_error": "environment_error",
    "early_exit": "unknown_agent_error",
}


class SweStep(BaseModel):
    model_config = ConfigDict(extra="allow")

    action: str
    observation: str | None = None
    thought: str | None = None
    response: str | None = None
    state: dict[str, Any] | str | None = None


class SweTraj(BaseModel):
    model_config = ConfigDict(extra="allow")

    trajectory: list[SweStep]
    history: list[dict[str, Any]] = []
    info: dict[str, Any] = {}
    replay_config: dict[str, Any] | str | None = None


def _open_file(state: dict[str, Any] | str | None) -> str | None:
    if isinstance(state, str):
        try:
            state = orjson.loads(state)
        except orjson.JSONDecodeError:
            return None
    value = state.get("open_file") if isinstance(state, dict) else None
    return None if value in (None, "n/a", "") else str(value)


def _model(doc: SweTraj) -> str | None:
    config = doc.replay_config
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            config = None
    if isinstance(config, dict):
        model = ((config.get("agent") or {}).get("model") or {}).get("name")
        if model:
            return str(model)
    return None


_RUN_NAME = re.compile(r"^(?P<model>[^_]+(?:_[^_]+)*?)__.+__t-\d[\d.]*__p-\d")
"""SWE-agent's own name for a run folder, `<model>__<data>__<config>__t-<temperature>__p-<top_p>…`."""


def run_name_model(run_id: str) -> str | None:
    """The model a SWE-agent run folder's name gives (`gpt4__swe-bench-dev…__t-0.00__p-0.95…` →
    gpt4), None for any other folder (a demonstrations folder such as `crypto` names no model:
    `ingest --model` says which it was)."""
    match = _RUN_NAME.match(run_id)
    return match.group("model") if match else None


def read_traj(path: Path) -> UnitResult:
    out = UnitResult()
    data = read_bytes(path, FORMAT)
    raw = load_json(path, data, FORMAT)
    instance_id = path.stem
    try:
        doc = SweTraj.model_validate(raw)
    except ValidationError as exc:
        raise validation_failure(path, exc, FORMAT, record=instance_id) from None
    run_dir = swe_bench.run_dir(path, instance_id)
    run_id = run_dir.name
    builder = StepBuilder(path, instance_id, FORMAT, trajectory_id=f"{run_id}/{instance_id}")
    instruction = None
    documented = interface_commands(
        "\n".join(str(m.get("content")) for m in doc.history[:3] if m.get("role") in ("system", "user"))
    )
    for message in doc.history:
        role = message.get("role")
        if role in ("system", "user") and message.get("content"):
            content = message["content"] if isinstance(message["content"], str) else str(message["content"])
            builder.message(role, content)
            if role == "user" and instruction is None:
                instruction = content
            continue
        break  # only the prompt before the first model turn; later turns are the steps below
    open_file = None
    for k, step in enumerate(doc.trajectory):
        # an older .traj keeps its state as JSON text taken before the action, a newer one as an
        # object taken after it; between them, `open` and `create` say which file is open
        open_file = (_open_file(step.state) if isinstance(step.state, str) else None) or open_file
        calls = normalise_swe_agent_action(step.action, open_file, documented)
        builder.calls(
            calls,
            tool_name="swe-agent",
            raw={"index": k, "action": step.action},
            output=step.observation,
            message=step.thought or step.response,
            # its tools' refusals (a linter rejecting an edit, no file open) on any step kind
            tool_failed=swe_agent_failed(step.action, step.observation),
        )
        after = _open_file(step.state) if isinstance(step.state, dict) else None
        open_file = after or swe_agent_open_file(step.action, open_file)
    out.issues.extend(builder.issues)
    stats = doc.info.get("model_stats") or {}
    exit_status = str(doc.info.get("exit_status") or "")
    outcome: Outcome | None = None
    harness_error = _HARNESS_EXITS.get(exit_status)
    report = swe_bench.verdict(path, instance_id, FORMAT, out.issues)
    if harness_error:
        outcome = "error"
    elif report is not None:
        outcome = "passed" if report.resolved else "failed"
    model = _model(doc) or run_name_model(run_id)
    traj = Trajectory(
        trajectory_id=f"{run_id}/{instance_id}",
        run_id=run_id,
        task_id=instance_id,
        model=model,
        outcome=outcome,
        harness_error=harness_error,
        input_tokens=stats.get("tokens_sent"),
        output_tokens=stats.get("tokens_received"),
        cost_usd=stats.get("instance_cost"),
        task=Task(task_id=instance_id, source="swe-bench", instruction=instruction),
        test_results=report.tests if report is not None else [],
        run=Run(
            run_id=run_id,
            agent="swe-agent",
            model=model,
            source_format=FORMAT,
            source_path=str(run_dir),
            config={"exit_status": exit_status} if exit_status else {},
        ),
    )
    add_trajectory(out.batch, traj, content_hash(data), FORMAT, str(path), legacy_hash(data), steps=builder)
    return out
