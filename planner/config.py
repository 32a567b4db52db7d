"""The contract between planner and trainer: `TrainingConfig`, of which `plan.yaml` is the dump.

`curriculab plan -o` writes it, `train()` and `loop` take it directly (or read it back with
`TrainingConfig.load`), and the dashboard and the trainer build the reward's curriculum from one
method, `CurriculumSection.tier_curriculum()`. The pinned section names stay: `grpo` (only
`trl.GRPOConfig` fields), `curriculum`, `dataset`, `reward`, `scale`; a `plan:` header carries
provenance and reasons.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from curriculab.planner.dynamic import DynamicSettings
from curriculab.planner.portfolio import (
    REWARD_FUNCTIONS,
    TERMINAL_REWARD_FUNCTIONS,
    Strategy,
    TierCurriculum,
    schedule_phases,
)
from curriculab.trajectory.errors import CurriculabError
from curriculab.trajectory.validation import first_problem
from curriculab.trajectory.vocabulary import TIERS

"""Reward functions `training.rewards.make_reward_functions` can build, by name."""


class ConfigError(CurriculabError, ValueError):
    """A plan.yaml that cannot be trained on; the message names the file, the key and the fix."""


class _Section(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


class PlanHeader(_Section):
    """Where the plan came from."""

    plan_id: str = "noplan"
    """The stored plan's id (hash of its content)."""
    planner_version: str = ""
    """Version of the planning rules."""
    target_model: str = ""
    """The model the plan was made for."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """Store fingerprint and inputs."""
    reasons: list[str] = Field(default_factory=list)
    """Every decision with the figure behind it."""


class DynamicSection(_Section):
    """The dynamic schedule (planner.dynamic.DynamicSettings) the training callback may switch on."""

    enabled: bool = False
    """Whether α follows live per-tier pass rates instead of the fixed schedule."""
    band: tuple[float, float] = (0.2, 0.8)
    """Pass rates at which a tier is informative."""
    margin: float = 0.05
    """Hysteresis: a tier joins inside band ∓ margin and leaves outside band ± margin."""
    min_dwell: int = 3
    """Updates a tier keeps its state before it may change."""
    smoothing: float = 0.5
    """Weight of the newest observation in the running pass rate."""
    alpha_floor: float = 0.05
    """Smallest share of α an active tier gets."""

    def settings(self) -> DynamicSettings:
        """The settings object `planner.dynamic` takes (validated there)."""
        return DynamicSettings(**self.model_dump(exclude={"enabled"}))


class LiveSamplingSection(_Section):
    """Live task sampling within a run (training.sampling)."""

    enabled: bool = True
    """Draw problems by the chance their next group is informative (False: TRL's RepeatSampler)."""
    decay: float = 0.7
    """Weight of earlier evidence each time a problem gets a new group."""
    sharpness: float = 4.0
    """Exponent on the informative-group probability."""
    floor: float = 0.02
    """Smallest weight: demoted problems are still re-tried now and then."""


class CurriculumSection(_Section):
    """Schedule α, weights w, and how they move during the run."""

    strategy: Strategy = "tarot"
    """tarot (tier-weighted reward) or a baseline."""
    schedule: str = "all"
    """forward, reversed, all or static-<tier>."""
    start_tier: str | None = None
    """The first practised tier when the zero-variance guard moved it."""
    weights: dict[str, float] = Field(default_factory=lambda: {t: 0.25 for t in TIERS})
    """w per tier."""
    alpha_bias: dict[str, float] = Field(default_factory=dict)
    """Relative α per tier among the active ones."""
    thresholds: dict[str, Any] = Field(default_factory=dict)
    """The capability thresholds and the zero-variance guard the plan used (for the record)."""
    planned_steps: int | None = None
    """Optimizer steps the schedule is laid over: progress = step / planned_steps (None: the run's max_steps)."""
    dynamic: DynamicSection = Field(default_factory=DynamicSection)
    """The dynamic schedule."""
    live_sampling: LiveSamplingSection = Field(default_factory=LiveSamplingSection)
    """Live task sampling."""

    @model_validator(mode="after")
    def _valid(self) -> CurriculumSection:
        schedule_phases(self.schedule, self.start_tier)
        unknown = set(self.weights) - set(TIERS)
        if unknown:
            raise ValueError(f"weights name unknown tier(s) {sorted(unknown)}; tiers are {', '.join(TIERS)}")
        if self.planned_steps is not None and self.planned_steps < 1:
            raise ValueError("planned_steps must be at least 1 (or left out)")
        return self

    def tier_curriculum(self) -> TierCurriculum:
        """The schedule and weights the reward uses (the trainer and the dashboard build it here)."""
        return TierCurriculum(
            self.schedule, dict(self.weights), start_tier=self.start_tier, alpha_bias=dict(self.alpha_bias)
        )


class DatasetSection(_Section):
    """The prompts to train on."""

    path: str
    """Parquet file with `prompt`, `problem_id` (relative to the plan.yaml)."""
    format: Literal["parquet"] = "parquet"
    """File format."""
    columns: list[str] = Field(default_factory=lambda: ["prompt", "problem_id", "tier_mix"])
    """Its columns."""
    rows: int | None = None
    """Its row count."""
    problems: str = "builtin"
    """The problem set: builtin, humaneval or a file."""
    tasks: str | None = None
    """A terminal task suite (builtin or a folder of Harbor task directories): the plan trains an agent in
    episodes (`train_agent`), its rows name tasks by `task_id`. None: a code-completion plan."""


class RewardSection(_Section):
    """Reward functions and their weights, in TRL's order (`GRPOConfig.reward_weights` is set from them)."""

    functions: list[str] = Field(default_factory=lambda: ["tarot_reward"])
    """Names from training.rewards (tarot_reward, avg_reward, pass_all_reward, format_reward), or for a task
    plan from training.terminal.rewards (milestone_reward, pass_reward, verification_reward)."""
    weights: list[float] = Field(default_factory=lambda: [1.0])
    """One weight per function."""

    @model_validator(mode="after")
    def _valid(self) -> RewardSection:
        known = REWARD_FUNCTIONS + TERMINAL_REWARD_FUNCTIONS
        unknown = [f for f in self.functions if f not in known]
        if unknown:
            raise ValueError(f"functions: {unknown} unknown; use {', '.join(known)}")
        if len(self.weights) != len(self.functions):
            raise ValueError(
                f"weights: {len(self.weights)} given for {len(self.functions)} functions; give one per function"
            )
        if len(set(self.functions)) != len(self.functions):
            raise ValueError("functions: a function is named twice; name each once")
        return self


class TrainingConfig(_Section):
    """A plan as the trainer runs it: plan.yaml's sections, validated."""

    plan: PlanHeader = Field(default_factory=PlanHeader)
    """Provenance and reasons."""
    grpo: dict[str, Any] = Field(default_factory=dict)
    """Only `trl.GRPOConfig` fields (`train` checks the keys against its fields before a model loads)."""
    curriculum: CurriculumSection = Field(default_factory=CurriculumSection)
    """Schedule, weights, dynamic schedule, live sampling."""
    dataset: DatasetSection
    """The prompts."""
    reward: RewardSection = Field(default_factory=RewardSection)
    """Reward functions and weights."""
    scale: dict[str, Any] = Field(default_factory=dict)
    """accelerate/DeepSpeed config, vLLM modes and launch commands (for people; `train` reads none of it)."""
    base_dir: Path | None = Field(default=None, exclude=True)
    """Where the YAML lies (the dataset path is relative to it); not written."""
    source: Path | None = Field(default=None, exclude=True)
    """The plan.yaml this was read from (None: made in memory), for errors found later; not written."""

    @model_validator(mode="after")
    def _grpo_clean(self) -> TrainingConfig:
        if "reward_weights" in self.grpo:
            raise ValueError("grpo.reward_weights: set the weights in reward.weights (one per reward.functions entry)")
        return self

    @property
    def dataset_path(self) -> Path:
        return (self.base_dir or Path(".")) / self.dataset.path

    @classmethod
    def load(cls, path: Path | str) -> TrainingConfig:
        """Read and validate a plan.yaml; errors name the file, the key and what to do."""
        path = Path(path)
        try:
            doc = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(
                f"{path}: cannot read the plan ({exc}). Make one: curriculab plan --model M -o plan.yaml"
            ) from None
        if not isinstance(doc, dict):
            raise ConfigError(
                f"{path}: not a plan (a YAML mapping with grpo, curriculum, dataset, reward). "
                "Export one with `curriculab plan -o`"
            )
        for section in ("grpo", "curriculum", "dataset", "reward"):
            if section not in doc:
                raise ConfigError(f"{path}: section {section!r} is missing; export the plan with `curriculab plan -o`")
        try:
            return cls.model_validate({**doc, "base_dir": path.parent, "source": path})
        except ValidationError as exc:
            first = first_problem(exc)
            where, message = first.where, first.message
            named = re.match(r"([a-z_]+): (.*)", message, re.S)  # a section's own check names its key first
            if named:
                where, message = ".".join(p for p in (where, named[1]) if p), named[2]
            raise ConfigError(
                f"{path}: {where or '(root)'}: {message}. Fix that key or export the plan again"
            ) from None

    def to_yaml(self) -> str:
        """plan.yaml's text: sections in the pinned order, stable float rounding."""
        body = self.model_dump(mode="json", exclude={"base_dir", "source"})
        return str(yaml.safe_dump(round_floats(body), sort_keys=False, allow_unicode=True, width=120))


def round_floats(value: Any, digits: int = 6) -> Any:
    """Every float inside `value` rounded (plan files and ids are stable to the last digit)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(v, digits) for v in value]
    return value
