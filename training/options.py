"""How one GRPO run is run, beside the plan it trains on: a dataclass that checks itself, as
TRL's configs do, so a wrong option is named before any model loads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from curriculab.training.generation import CHOICES as GENERATION_CHOICES
from curriculab.training.models import CACHE_DIR, TrainError

VLLM_MODES = ("server", "colocate")


@dataclass
class TrainOptions:
    """The options of `train()`; every one has a default that follows the plan."""

    max_steps: int | None = None
    """Optimizer steps (None: the plan's epochs)."""
    output_dir: Path | str | None = None
    """Checkpoints, rollouts and the final model (None: the plan's `grpo.output_dir`, else runs/grpo)."""
    resume: bool = False
    """Continue from the last complete checkpoint in `output_dir`."""
    use_vllm: str | None = None
    """"server" or "colocate": the same as `generation_backend="vllm-<mode>"`."""
    db_path: str | None = None
    """The store rollouts and metrics land in (None: they stay in `output_dir`)."""
    dynamic: bool | None = None
    """Dynamic α from live per-tier pass rates (None: as the plan says)."""
    live_sampling: bool | None = None
    """Draw problems less whose recent groups were all-same (None: as the plan says)."""
    allow_unsandboxed: bool = False
    """Score even where no sandbox works (rlimits only)."""
    save_steps: int | None = None
    """Checkpoint (and ingest rollouts) every N steps (None: half of max_steps)."""
    summary: Callable[[int, dict[str, float]], None] | None = None
    """Told each logging step's number and metrics (`callback.summary_line` formats them)."""
    cache_dir: Path = CACHE_DIR
    """Fetched models and the generation backends' measurements."""
    model_label: str | None = None
    """The name the rollouts are stored under (None: the base model's name)."""
    force_cpu: bool = False
    """Train on the CPU even where CUDA is."""
    stop_after_s: float | None = None
    """A time budget for the whole call: no step starts that would leave too little for the run's end."""
    generation_backend: str = "auto"
    """One of `generation.CHOICES`; auto measures the in-process backends here and takes the fastest."""
    announce: Callable[[str], None] | None = None
    """Told which generation backend runs and why."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "save_steps"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise TrainError(f"{name} must be a whole number of steps, 1 or more (got {value!r})")
        if self.stop_after_s is not None and not self.stop_after_s > 0:
            raise TrainError(f"stop_after_s must be a positive number of seconds (got {self.stop_after_s!r})")
        if self.use_vllm is not None and self.use_vllm not in VLLM_MODES:
            raise TrainError(f"use_vllm must be one of {', '.join(VLLM_MODES)} (got {self.use_vllm!r})")
        if self.generation_backend not in GENERATION_CHOICES:
            raise TrainError(
                f"generation_backend {self.generation_backend!r} unknown; use one of {', '.join(GENERATION_CHOICES)}"
            )
        if self.use_vllm is not None and self.generation_backend not in ("auto", f"vllm-{self.use_vllm}"):
            raise TrainError(
                f"use_vllm={self.use_vllm!r} asks for vllm-{self.use_vllm}, generation_backend for "
                f"{self.generation_backend}: give one of them"
            )
        self.cache_dir = Path(self.cache_dir)

    @property
    def backend_asked(self) -> str:
        """The generation backend asked for, `use_vllm` spelled as its backend."""
        return f"vllm-{self.use_vllm}" if self.use_vllm else self.generation_backend
