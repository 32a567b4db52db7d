"""curriculab's own JSONL: one canonical `Trajectory` per line (schema: `docs/jsonl.md`).

Each line is validated on its own: a bad line is quarantined with its line number and field,
and every good line of the same file still lands.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from curriculab.analysis.ingest.common import (
    UnitResult,
    add_trajectory,
    cap_output,
    cap_text,
    json_failure,
    make_issue,
    message_capped,
    output_capped,
    read_bytes,
    validation_failure,
)
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.trajectory.model import Run, Trajectory

FORMAT = "jsonl"


def read_jsonl(path: Path) -> UnitResult:
    out = UnitResult()
    data = read_bytes(path, FORMAT)
    if not data.strip():
        raise json_failure(path, data, ValueError("empty"), FORMAT)  # "file is empty": a file with no record says so
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        record = f"line {number}"
        try:
            traj = Trajectory.model_validate_json(line)
        except ValidationError as exc:
            out.issues.append(validation_failure(path, exc, FORMAT, record=record, data=line).issue)
            continue
        order = [s.step_idx for s in traj.steps]
        if order != list(range(len(order))):
            bad = next(k for k, idx in enumerate(order) if idx != k)
            out.issues.append(
                make_issue(
                    path,
                    f"steps[{bad}].step_idx is {order[bad]}, expected {bad}",
                    "Number steps 0, 1, 2, ... in order",
                    record=record,
                    field=f"steps[{bad}].step_idx",
                    source_format=FORMAT,
                )
            )
            continue
        for step in traj.steps:  # the same caps as every other format
            message, dropped = cap_text(step.message)
            if dropped:
                out.issues.append(message_capped(path, record, step.step_idx, dropped, FORMAT))
                step.message = message
            output, truncated, dropped = cap_output(step.output)
            if dropped:
                out.issues.append(
                    output_capped(path, record, step.step_idx, dropped, FORMAT, f"steps[{step.step_idx}].output")
                )
                step.output, step.output_truncated = output, True
        if traj.run is None:
            traj.run = Run(run_id=traj.run_id, model=traj.model, source_format=FORMAT, source_path=str(path))
        add_trajectory(out.batch, traj, content_hash(line), FORMAT, f"{path}:{number}", legacy_hash(line))
    return out
