"""Task metadata: Harbor `task.toml` and Terminal-Bench 1.x `task.yaml` directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from curriculab.analysis.ingest.common import UnitResult, fail, read_bytes, validation_failure
from curriculab.analysis.ingest.harbor_task import HarborTaskConfig, read_task_config
from curriculab.trajectory.model import Task

_TIER_OF_DIFFICULTY = {"easy": "basic", "medium": "intermediate", "hard": "complex"}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def task_from_toml(task_dir: Path, source: str | None = None) -> Task:
    """Read a Harbor task directory (`task.toml`, `instruction.md`, or one `steps/<name>/instruction.md`
    a step) into a Task; the id is the directory name."""
    path = task_dir / "task.toml"
    config = read_task_config(path, read_bytes(path, "harbor"))
    meta = config.metadata
    instruction = _instruction(task_dir, config)
    difficulty = config.difficulty
    tags = meta.get("tags") or []
    languages = meta.get("languages") or []
    known = {"difficulty", "category", "tags", "language", "tier", "codebase_files", "n_milestones", "task_type"}
    metadata: dict[str, Any] = {k: v for k, v in meta.items() if k not in known}
    for section, phase in (("verifier", config.verifier), ("agent", config.agent)):
        if phase.timeout_sec is not None:
            metadata[f"{section}_timeout_sec"] = phase.timeout_sec
    environment = {k: v for k, v in vars(config.environment).items() if v is not None}
    if environment:
        metadata["environment"] = environment
    if config.steps:
        metadata["steps"] = [step.name for step in config.steps]
        metadata["multi_step_reward_strategy"] = config.multi_step_reward_strategy or "mean"
    if config.name:
        metadata["package"] = config.name
    metadata["schema_version"] = config.schema_version
    try:
        return Task(
            task_id=task_dir.name,
            source=source,
            instruction=instruction,
            task_type=meta.get("task_type") or meta.get("category"),
            language=meta.get("language") or (languages[0] if languages else None),
            tier_authored=meta.get("tier") or _TIER_OF_DIFFICULTY.get(str(difficulty).lower()),
            difficulty_authored=difficulty,
            codebase_files=_int(meta.get("codebase_files")),
            n_milestones=config.declared_milestones,
            tags=[str(t) for t in tags] if isinstance(tags, list) else [str(tags)],
            metadata={**metadata, "category": meta.get("category")},
        )
    except ValidationError as exc:
        raise validation_failure(path, exc, "harbor", prefix="metadata.") from None


def _instruction(task_dir: Path, config: HarborTaskConfig) -> str | None:
    """The task's instruction; a multi-step task's is its steps' in order, each under its name."""
    if not config.steps:
        single = task_dir / "instruction.md"
        return single.read_text(errors="replace") if single.exists() else None
    parts = []
    for index, step in enumerate(config.steps):
        text = step_instruction(task_dir, config, index).read_text(errors="replace").strip()
        parts.append(f"## Step {index + 1}: {step.name}\n\n{text}")
    return "\n\n".join(parts)


def step_instruction(task_dir: Path, config: HarborTaskConfig, index: int) -> Path:
    """`steps/<name>/instruction.md` of step `index`; an `IngestFailure` names the step when it is missing."""
    name = config.steps[index].name
    path = task_dir / "steps" / name / "instruction.md"
    if not path.is_file():
        raise fail(
            config.path,
            f"step {name!r} has no instruction ({path} is missing)",
            f"Write steps/{name}/instruction.md or remove the step",
            field=f"steps[{index}].name",
            source_format="harbor",
        )
    return path


def task_from_yaml(task_dir: Path, source: str | None = None) -> Task:
    """Read a Terminal-Bench 1.x `<task_dir>/task.yaml` into a Task."""
    path = task_dir / "task.yaml"
    data = read_bytes(path, "tb")
    import yaml  # only task folders need it: a re-ingest with nothing new reads none

    try:
        doc = yaml.safe_load(data.decode("utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise fail(
            path, f"invalid YAML: {str(exc).splitlines()[0]}", "Fix the file's syntax", source_format="tb"
        ) from None
    if not isinstance(doc, dict):
        raise fail(path, "task.yaml is not a mapping", "Write it as `key: value` lines", source_format="tb")
    instruction = doc.get("instruction")
    if instruction is None and isinstance(doc.get("descriptions"), list) and doc["descriptions"]:
        instruction = doc["descriptions"][0].get("description")
    difficulty = doc.get("difficulty")
    tags = doc.get("tags") or []
    metadata = {
        k: doc[k]
        for k in (
            "category",
            "author_email",
            "max_agent_timeout_sec",
            "max_test_timeout_sec",
            "parser_name",
            "run_tests_in_same_shell",
        )
        if k in doc
    }
    try:
        return Task(
            task_id=task_dir.name,
            source=source,
            instruction=instruction,
            task_type=doc.get("category"),
            tier_authored=_TIER_OF_DIFFICULTY.get(str(difficulty)),
            difficulty_authored=str(difficulty) if difficulty is not None else None,
            tags=[str(t) for t in tags] if isinstance(tags, list) else [str(tags)],
            metadata=metadata,
        )
    except ValidationError as exc:
        raise validation_failure(path, exc, "tb") from None


def read_task_dir(task_dir: Path, kind: str) -> UnitResult:
    out = UnitResult()
    task = task_from_toml(task_dir) if kind == "harbor-task" else task_from_yaml(task_dir)
    out.batch.add_task(task)
    out.tasks_only = 1
    return out
