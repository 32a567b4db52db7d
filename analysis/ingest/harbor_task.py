"""Harbor's `task.toml`, read as Harbor defines it (`harbor.models.task.config.TaskConfig`,
schema 1.0 through 1.4): the fields curriculab stores and runs, checked with errors that name the
file, the field and the fix. Harbor's own package needs Python 3.12 and is never imported."""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curriculab.analysis.issues import IngestFailure, fail

DIFFICULTIES = ("easy", "medium", "hard")
"""Harbor's `[metadata] difficulty` values (the store maps them to tiers basic/intermediate/complex)."""
REWARD_STRATEGIES = ("mean", "final")
"""`multi_step_reward_strategy`: per-key mean over the steps (Harbor's default), or the last step's rewards."""
_STEP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class PhaseConfig:
    """An `[agent]` or `[verifier]` table (of the task or of one step)."""

    timeout_sec: float | None = None
    """Seconds the phase may take (None: the runner's default)."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables the phase runs with (`[verifier.env]`)."""


@dataclass(frozen=True)
class StepConfig:
    """One `[[steps]]` entry of a multi-step task: its files live in `steps/<name>/`."""

    name: str
    """Directory name under `steps/` (instruction.md, tests/, solution/)."""
    agent: PhaseConfig
    """The step's `[steps.agent]`."""
    verifier: PhaseConfig
    """The step's `[steps.verifier]`."""
    min_reward: float | dict[str, float] | None = None
    """Below this, Harbor stops the remaining steps."""
    milestones: tuple[str, ...] | None = None
    """`milestones = [...]`: the keys the step's reward.json must hold (curriculab's; None: not declared)."""


@dataclass(frozen=True)
class EnvironmentConfig:
    """The `[environment]` table."""

    workdir: str | None = None
    """Working directory of the agent's shell (overrides the Dockerfile's WORKDIR)."""
    docker_image: str | None = None
    """A prebuilt image to run instead of building `environment/Dockerfile`."""
    cpus: float | None = None
    """CPUs the task asks for."""
    memory_mb: int | None = None
    """Memory the task asks for."""
    storage_mb: int | None = None
    """Disk the task asks for."""
    allow_internet: bool | None = None
    """Whether the task needs the network (the deprecated field, or `network_mode` != no-network)."""
    build_timeout_sec: float | None = None
    """Seconds its image may take to build."""


@dataclass(frozen=True)
class HarborTaskConfig:
    """What a `task.toml` says, with Harbor's names."""

    path: Path
    """The task.toml read."""
    schema_version: str
    """`schema_version` (1.4 today), or the older `version` (1.0, 2.0 in the wild)."""
    name: str | None
    """`[task] name` (`org/name`), when the task is a package."""
    description: str | None
    """`[task] description`."""
    metadata: dict[str, Any]
    """The `[metadata]` table as written (difficulty, category, tags, number_of_milestones, …)."""
    agent: PhaseConfig
    """`[agent]`."""
    verifier: PhaseConfig
    """`[verifier]`."""
    environment: EnvironmentConfig
    """`[environment]`."""
    solution_env: dict[str, str]
    """`[solution.env]`."""
    steps: list[StepConfig]
    """`[[steps]]`, empty for a single-step task."""
    multi_step_reward_strategy: str | None
    """mean or final (None: mean, for a multi-step task)."""

    @property
    def difficulty(self) -> str | None:
        value = self.metadata.get("difficulty")
        return str(value) if value is not None else None

    @property
    def declared_milestones(self) -> int | None:
        """`number_of_milestones` (or the older `n_milestones`) from `[metadata]`, else the number of steps."""
        for key in ("number_of_milestones", "n_milestones"):
            value = self.metadata.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return len(self.steps) or None

    @property
    def milestone_names(self) -> tuple[str, ...] | None:
        """`[metadata] milestones`: the keys a single-step task's reward.json must hold (None: not declared)."""
        names = self.metadata.get("milestones")
        return tuple(names) if names else None


class _Reader:
    def __init__(self, path: Path, source_format: str):
        self.path, self.source_format = path, source_format

    def error(self, where: str, problem: str, fix: str) -> IngestFailure:
        return fail(self.path, problem, fix, field=where, source_format=self.source_format)

    def table(self, doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
        value = doc.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(where, f"is a {type(value).__name__}, not a table", f"Write it as a [{where}] table")
        return value

    def number(self, doc: dict[str, Any], key: str, where: str) -> float | None:
        value = doc.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise self.error(where, f"is {value!r}, not a positive number of seconds", f"Write e.g. {key} = 600.0")
        return float(value)

    def whole(self, doc: dict[str, Any], key: str, where: str) -> int | None:
        value = doc.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(where, f"is {value!r}, not a whole number", f"Write e.g. {key} = 2048")
        return value

    def env(self, doc: dict[str, Any], where: str) -> dict[str, str]:
        table = self.table(doc, "env", where)
        bad = [key for key, value in table.items() if not isinstance(value, str | int | float | bool)]
        if bad:
            raise self.error(f"{where}.{bad[0]}", "is not a string", 'Write each variable as NAME = "value"')
        return {key: str(value) for key, value in table.items()}

    def phase(self, doc: dict[str, Any], key: str, where: str) -> PhaseConfig:
        table = self.table(doc, key, where)
        return PhaseConfig(self.number(table, "timeout_sec", f"{where}.timeout_sec"), self.env(table, f"{where}.env"))


def read_task_config(path: Path, data: bytes, source_format: str = "harbor") -> HarborTaskConfig:
    """Parse and check one task.toml; an `IngestFailure` names the file, the field and the fix."""
    reader = _Reader(path, source_format)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise fail(path, f"invalid TOML: {exc}", "Fix the file's syntax", source_format=source_format) from None
    version = doc.get("schema_version", doc.get("version", "1.0"))
    if not isinstance(version, str | int | float):
        raise reader.error("schema_version", f"is {version!r}", 'Write schema_version = "1.4"')
    package = reader.table(doc, "task", "task")
    name = package.get("name")
    if name is not None and (not isinstance(name, str) or name.count("/") != 1):
        raise reader.error("task.name", f"is {name!r}, not 'org/name'", 'Write e.g. name = "my-org/fix-the-parser"')
    metadata = reader.table(doc, "metadata", "metadata")
    difficulty = metadata.get("difficulty")
    if difficulty is not None and str(difficulty).lower() not in DIFFICULTIES:
        raise reader.error(
            "metadata.difficulty", f"is {difficulty!r}", f"Use one of {', '.join(DIFFICULTIES)} (Harbor's scale)"
        )
    for key in ("tags", "languages", "subcategories", "milestones"):
        value = metadata.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise reader.error(f"metadata.{key}", f"is {value!r}, not a list of strings", f'Write {key} = ["a", "b"]')
    for key in ("number_of_milestones", "n_milestones", "codebase_files"):
        reader.whole(metadata, key, f"metadata.{key}")
    environment = reader.table(doc, "environment", "environment")
    workdir = environment.get("workdir")
    if workdir is not None and (not isinstance(workdir, str) or not workdir.startswith("/")):
        raise reader.error("environment.workdir", f"is {workdir!r}, not an absolute path", 'Write workdir = "/app"')
    network_mode = environment.get("network_mode")
    allow_internet = environment.get("allow_internet")
    if allow_internet is not None and not isinstance(allow_internet, bool):
        raise reader.error("environment.allow_internet", f"is {allow_internet!r}", "Write true or false")
    if network_mode is not None:
        if network_mode not in ("no-network", "public", "allowlist"):
            raise reader.error(
                "environment.network_mode", f"is {network_mode!r}", "Use no-network, public or allowlist"
            )
        allow_internet = network_mode != "no-network"
    cpus = environment.get("cpus")
    if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, int | float) or cpus <= 0):
        raise reader.error("environment.cpus", f"is {cpus!r}, not a positive number", "Write e.g. cpus = 1")
    image = environment.get("docker_image")
    if image is not None and not isinstance(image, str):
        raise reader.error("environment.docker_image", f"is {image!r}", 'Write docker_image = "name:tag"')
    strategy = doc.get("multi_step_reward_strategy")
    if strategy is not None and strategy not in REWARD_STRATEGIES:
        raise reader.error(
            "multi_step_reward_strategy", f"is {strategy!r}", f"Use one of {', '.join(REWARD_STRATEGIES)}"
        )
    raw_steps = doc.get("steps")
    if raw_steps is not None and not (isinstance(raw_steps, list) and all(isinstance(s, dict) for s in raw_steps)):
        raise reader.error("steps", "is not an array of tables", 'Write each step as [[steps]] with name = "..."')
    steps: list[StepConfig] = []
    seen: set[str] = set()
    for index, step in enumerate(raw_steps or []):
        where = f"steps[{index}]"
        step_name = step.get("name")
        if not isinstance(step_name, str) or not _STEP_NAME.match(step_name):
            raise reader.error(
                f"{where}.name",
                f"is {step_name!r}, not a directory name",
                "Name the step as its folder under steps/ (letters, digits, '.', '_', '-')",
            )
        if step_name.casefold() in seen:
            raise reader.error(f"{where}.name", f"repeats {step_name!r}", "Give every step a name of its own")
        seen.add(step_name.casefold())
        step_milestones = step.get("milestones")
        if step_milestones is not None and not (
            isinstance(step_milestones, list) and step_milestones and all(isinstance(v, str) for v in step_milestones)
        ):
            raise reader.error(
                f"{where}.milestones", f"is {step_milestones!r}, not a list of names", 'Write milestones = ["a", "b"]'
            )
        min_reward = step.get("min_reward")
        if min_reward is not None and not isinstance(min_reward, int | float | dict):
            raise reader.error(f"{where}.min_reward", f"is {min_reward!r}", "Write a number or a table of numbers")
        steps.append(
            StepConfig(
                step_name,
                reader.phase(step, "agent", f"{where}.agent"),
                reader.phase(step, "verifier", f"{where}.verifier"),
                min_reward,
                tuple(step_milestones) if step_milestones else None,
            )
        )
    return HarborTaskConfig(
        path=path,
        schema_version=str(version),
        name=name,
        description=package.get("description") or None,
        metadata=metadata,
        agent=reader.phase(doc, "agent", "agent"),
        verifier=reader.phase(doc, "verifier", "verifier"),
        environment=EnvironmentConfig(
            workdir=workdir,
            docker_image=image,
            cpus=float(cpus) if cpus is not None else None,
            memory_mb=reader.whole(environment, "memory_mb", "environment.memory_mb"),
            storage_mb=reader.whole(environment, "storage_mb", "environment.storage_mb"),
            allow_internet=allow_internet,
            build_timeout_sec=reader.number(environment, "build_timeout_sec", "environment.build_timeout_sec"),
        ),
        solution_env=reader.env(reader.table(doc, "solution", "solution"), "solution.env"),
        steps=steps,
        multi_step_reward_strategy=strategy,
    )
