"""What both trainers build the same way (`grpo.train` for problem plans, `agentic.train_agent` for
task plans): the plan read or refused, its `grpo:` section checked against `trl.GRPOConfig`, the run
id, the checkpoint to resume from, the `GRPOConfig` with what a run sets itself, and the result.
Each trainer plugs in what is its own: rewards, the dataset, generation, what it writes per batch."""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from curriculab.planner.config import ConfigError, TrainingConfig
from curriculab.training.models import TrainError
from curriculab.training.options import TrainOptions


@dataclass(kw_only=True)
class TrainResult:
    """What a training run did (built by keyword: its fields are many and several are alike)."""

    run_id: str
    """The run's id in the store."""
    output_dir: str
    """Checkpoints, rollouts and the final model."""
    steps: int
    """Optimizer steps done."""
    rollouts: int
    """Completions written."""
    seconds: float
    """Wall time of `trainer.train`."""
    store_seconds: float
    """Of which the training loop spent on rollouts and metrics: writing shards, waiting for a
    checkpoint's ingest (it runs beside training) and the final ingest."""
    reward_seconds: float
    """Of which scoring completions in the sandbox (all reward functions)."""
    last_logs: dict[str, float] = field(default_factory=dict)
    """The last logged metrics."""
    planned_steps: int | None = None
    """Steps the schedule was laid over (None: the run's own max_steps)."""
    all_same_share: float | None = None
    """Share of GRPO groups whose rewards were all equal (no gradient), from the reward's own results."""
    generation_backend: str = "generate"
    """The backend that generated the rollouts (`training/generation.py`)."""
    main_process: bool = True
    """Whether this process is rank 0 of its run (the one that reports it)."""

    @property
    def schedule_progress(self) -> float:
        """How far the schedule got: steps done over planned steps (1.0 when the run was the plan)."""
        return min(1.0, self.steps / self.planned_steps) if self.planned_steps else 1.0


def last_complete_checkpoint(output: Path) -> Path | None:
    """The newest checkpoint that was written to the end (its trainer_state.json is saved last);
    newer ones, cut short by a kill, are removed."""
    found = sorted(
        (int(p.name.split("-")[-1]), p) for p in output.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()
    )
    complete = [p for _, p in found if (p / "trainer_state.json").exists()]
    if not complete:
        return None
    last = complete[-1]
    for step, path in found:
        if step > int(last.name.split("-")[-1]):
            shutil.rmtree(path, ignore_errors=True)
    return last


def loaded_plan(config: TrainingConfig | Path | str) -> TrainingConfig:
    """The plan, read from its plan.yaml when a path is given (a TrainError names what is wrong)."""
    if isinstance(config, TrainingConfig):
        return config
    try:
        return TrainingConfig.load(config)
    except ConfigError as exc:
        raise TrainError(str(exc)) from None


def run_id_for(plan_id: str, seed: int, output_dir: Path) -> str:
    """The same plan, seed and output directory give the same run id (a resumed run is the same run)."""
    digest = hashlib.sha256(str(output_dir.resolve()).encode()).hexdigest()[:6]
    return f"grpo-{plan_id}-s{seed}-{digest}"


def check_grpo_section(config: TrainingConfig, grpo_config: type) -> None:
    """A TrainError naming each key of the plan's `grpo:` section that `trl.GRPOConfig` has no
    field for, with the nearest field: found before the model loads, not after."""
    known = {f.name for f in fields(grpo_config)}
    where = config.source or "the plan"
    for key in config.grpo:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise TrainError(
                f"{where}: grpo.{key} is not a trl.GRPOConfig field; {hint}"
                "fix or remove the key (the fields: https://huggingface.co/docs/trl/grpo_trainer#trl.GRPOConfig)"
            )


def checkpoint_to_resume(output: Path, resume: bool) -> Path | None:
    """The checkpoint to resume from, or None for a fresh run, which must not overwrite another
    run's checkpoints (a TrainError says what to pass instead)."""
    if not resume:
        if output.exists() and any(output.glob("checkpoint-*")):
            raise TrainError(
                f"{output} holds checkpoints of an earlier run. Pass --resume to continue it, or another --output-dir"
            )
        return None
    checkpoint = last_complete_checkpoint(output)
    if checkpoint is None:
        raise TrainError(f"--resume: no complete checkpoint in {output}. Start without --resume")
    return checkpoint


def grpo_arguments(
    config: TrainingConfig,
    options: TrainOptions,
    output: Path,
    cuda: bool,
    *,
    completion_cap: int | None = None,
    backend: dict[str, Any] | None = None,
) -> Any:
    """The run's `trl.GRPOConfig`: the plan's `grpo:` section, with what a run sets itself (output
    folder, a log line and metrics per step, checkpoints every `save_steps`, the device, the plan's
    reward weights), `options.max_steps`, the completion length capped at `completion_cap` (the tiny
    models) and the generation backend's fields. A section TRL rejects is a TrainError."""
    from trl import GRPOConfig

    grpo = dict(config.grpo)
    grpo.update(
        output_dir=str(output),
        logging_steps=1,
        save_strategy="steps",
        report_to="none",
        save_steps=options.save_steps or max(1, (options.max_steps or 10) // 2),
        use_cpu=not cuda,
        bf16=cuda,
        reward_weights=list(config.reward.weights),
    )
    if options.max_steps is not None:
        grpo["max_steps"] = options.max_steps
    if completion_cap is not None:
        grpo["max_completion_length"] = min(int(grpo.get("max_completion_length", 512)), completion_cap)
    grpo.update(backend or {})
    try:
        return GRPOConfig(**grpo)
    except (TypeError, ValueError) as exc:
        raise TrainError(f"grpo section rejected by trl.GRPOConfig: {exc}") from None


def process_rank(live_sampling: bool, stop_after_s: float | None) -> int:
    """This process's rank (torchrun / accelerate launch say it; each rank generates and scores its own
    share of every batch), refusing what cannot hold across several processes."""
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and live_sampling:
        raise TrainError(
            "live sampling keeps its statistics per process, so ranks would sample different problems. "
            "Pass --static-sampling to train on several processes"
        )
    if world > 1 and stop_after_s is not None:
        raise TrainError(
            "a time budget is kept per process, so ranks could stop at different steps. "
            "Use --max-steps to train on several processes"
        )
    return rank
