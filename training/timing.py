"""Where a training step's time goes: generation, reward scoring, storing rollouts and metrics, and
the rest (forward, backward and the optimiser), with generated tokens per second and, on CUDA,
the GPU's memory and utilisation. The trainer and the reward functions add to one clock; the
callback takes its readings once per logging step."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass
class StepClock:
    """Seconds and tokens accumulated since the last reading (the reward runs in TRL's thread,
    the store in the callback's: a lock keeps the sums whole)."""

    generation_s: float = 0.0
    """Time in the generation backend (`model.generate`, vLLM)."""
    reward_s: float = 0.0
    """Time in the reward functions, the sandboxed scoring, less the rollout writes inside them."""
    store_s: float = 0.0
    """Time training waited on writing rollouts, metrics and the store."""
    environment_s: float = 0.0
    """Time in agentic episodes' environments (resets, commands, the verifier), taken out of the
    generation and reward time it happened inside of."""
    generated_tokens: int = 0
    """Completion tokens generated."""
    environment_failures: int = 0
    """Agentic episodes whose environment failed (`EpisodeResult.failure`): their rewards are None."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def reading(self, step_time_s: float) -> dict[str, float]:
        """The metrics for a logging step of `step_time_s` seconds, and a fresh start for the next."""
        with self._lock:
            generation, reward, store, tokens = self.generation_s, self.reward_s, self.store_s, self.generated_tokens
            environment, failures = self.environment_s, self.environment_failures
            self.generation_s = self.reward_s = self.store_s = self.environment_s = 0.0
            self.generated_tokens = self.environment_failures = 0
        numbers = {
            "time/generation_s": generation,
            "time/reward_s": reward,
            "time/store_s": store,
            "time/train_s": max(0.0, step_time_s - generation - reward - store - environment),
            "generated_tokens": float(tokens),
        }
        if environment > 0:
            numbers["time/environment_s"] = environment
            numbers["env/failures"] = float(failures)
        if generation > 0:
            numbers["generated_tokens_per_s"] = tokens / generation
        numbers.update(gpu_reading())
        return numbers


class timed:
    """A context that adds its wall time to one of a clock's counters."""

    def __init__(self, clock: StepClock | None, counter: str) -> None:
        self.clock, self.counter = clock, counter

    def __enter__(self) -> timed:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.clock is not None:
            self.clock.add(**{self.counter: time.perf_counter() - self.started})


def gpu_reading() -> dict[str, float]:
    """On CUDA: peak memory allocated since the last reading (GiB) and, with nvidia-ml-py, the GPU's
    utilisation now (%). Nothing on CPU."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    numbers = {"gpu/memory_peak_gib": torch.cuda.max_memory_allocated() / 2**30}
    torch.cuda.reset_peak_memory_stats()
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        numbers["gpu/utilization_pct"] = float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
    except Exception:  # no nvidia-ml-py, or no NVML on this machine: memory alone
        pass
    return numbers
