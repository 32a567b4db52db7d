"""How GRPO rollouts are generated: the backends the stack offers, and a measured choice among them.

Nothing here generates during training; each backend is a set of `GRPOConfig` fields that TRL
acts on. `auto` times the in-process backends on the model about to be trained (a few prompts,
the run's completion length, sampling as in training) and keeps the fastest where it clearly beats
`generate` (`CLEAR_WIN`); vLLM is never
chosen on its own, because colocated vLLM takes a share of GPU memory and server mode needs a
server started first: ask for it by name.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curriculab.trajectory.errors import CurriculabError

BACKENDS: dict[str, dict[str, Any]] = {
    "generate": {},
    "static-cache": {"cache_implementation": "static"},
    "continuous-batching": {"use_transformers_continuous_batching": True},
    "vllm-colocate": {"use_vllm": True, "vllm_mode": "colocate"},
    "vllm-server": {"use_vllm": True, "vllm_mode": "server"},
}
"""Backend name -> the `GRPOConfig` fields that select it. `generate` is transformers'
`model.generate` with a dynamic cache; `static-cache` preallocates the cache (on CUDA transformers
then compiles the decoding step with CUDA graphs, on CPU it does not); `continuous-batching` is
transformers' paged engine (`generate_batch`); the vLLM pair is TRL's vLLM integration."""

CHOICES = ("auto", *BACKENDS)


def probed(cuda: bool) -> tuple[str, ...]:
    """What `auto` measures: the backends that run inside the training process with no extra setup.
    On CPU not continuous batching: its paged engine costs seconds a call there whatever the length
    (bench/generation_backends.py; its figures in bench/RESULTS.md), so
    measuring it would cost more than it could ever win. Ask for it by name to use it anyway."""
    return ("generate", "static-cache", "continuous-batching") if cuda else ("generate", "static-cache")


class BackendUnavailable(CurriculabError, ValueError):
    """A backend this machine cannot run; the message says what it needs."""


def unavailable_reason(backend: str, cuda: bool) -> str | None:
    """Why `backend` cannot run here, or None when it can."""
    if backend not in BACKENDS:
        return f"unknown generation backend {backend!r}; choose one of {', '.join(CHOICES)}"
    if backend.startswith("vllm"):
        if not cuda:
            return f"{backend} needs a CUDA GPU"
        if importlib.util.find_spec("vllm") is None:
            return f"{backend} needs vllm (pip install 'curriculab[gpu]')"
    if backend == "continuous-batching":
        if importlib.util.find_spec("transformers.generation.continuous_batching") is None:
            return "continuous-batching needs transformers >= 5.8 (generate_batch)"
    return None


@dataclass(frozen=True)
class Probe:
    """One backend's measured generation speed on the model about to be trained."""

    backend: str
    """The backend measured."""
    tokens: int
    """Completion tokens generated in the timed runs."""
    seconds: float
    """Wall time of the timed runs (after one untimed warm-up run)."""

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def _generate(model: Any, tokenizer: Any, prompts: Sequence[str], backend: str, max_new_tokens: int) -> int:
    """Generate one completion per prompt with `backend` as TRL would; returns completion tokens."""
    import torch
    from transformers import GenerationConfig

    config = GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        cache_implementation=BACKENDS[backend].get("cache_implementation"),
    )
    if backend == "continuous-batching":
        ids = [tokenizer(p)["input_ids"] for p in prompts]
        outputs = model.generate_batch(inputs=ids, generation_config=config, progress_bar=False)
        return sum(len(o.generated_tokens) for o in outputs.values())
    batch = tokenizer(prompts, return_tensors="pt", padding=True).to(model.device)
    with torch.no_grad():
        out = model.generate(**batch, generation_config=config)
    completions = out[:, batch["input_ids"].shape[1] :]
    return int((completions != tokenizer.pad_token_id).sum())


def probe(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    backend: str,
    max_new_tokens: int,
    repeats: int = 2,
    give_up_after_s: float | None = None,
) -> Probe:
    """Time `backend`: one warm-up run (compilation, cache allocation), then `repeats` timed runs.
    A warm-up slower than `give_up_after_s` is the measurement (the backend has lost already)."""
    started = time.perf_counter()
    warm_tokens = _generate(model, tokenizer, prompts, backend, max_new_tokens)
    warm_s = time.perf_counter() - started
    if give_up_after_s is not None and warm_s > give_up_after_s:
        return Probe(backend, warm_tokens, warm_s)
    tokens, times = 0, []
    for _ in range(repeats):
        started = time.perf_counter()
        tokens += _generate(model, tokenizer, prompts, backend, max_new_tokens)
        times.append(time.perf_counter() - started)
    return Probe(backend, tokens, statistics.median(times) * repeats)


def choose_backend(
    requested: str,
    cuda: bool,
    model: Any = None,
    tokenizer: Any = None,
    prompts: Sequence[str] = (),
    max_new_tokens: int = 32,
) -> tuple[str, list[Probe]]:
    """The backend to train with and, for `auto`, what was measured to choose it.

    A named backend is checked (BackendUnavailable says what it needs); `auto` probes each
    available in-process backend on `model` and keeps the one with the most tokens/s if it beats
    `generate` (always probed first) by `CLEAR_WIN`, else `generate`.
    """
    if requested != "auto":
        reason = unavailable_reason(requested, cuda)
        if reason:
            raise BackendUnavailable(reason)
        return requested, []
    probes: list[Probe] = []
    for name in probed(cuda):
        if unavailable_reason(name, cuda) is None:
            # a backend whose warm-up takes 5x the best timed run is not worth timing further
            best_run_s = min((p.seconds / 2 for p in probes), default=None)
            probes.append(
                probe(
                    model,
                    tokenizer,
                    list(prompts),
                    name,
                    max_new_tokens,
                    give_up_after_s=5 * best_run_s if best_run_s else None,
                )
            )
    best = max(probes, key=lambda p: p.tokens_per_s)
    baseline = next(p for p in probes if p.backend == "generate")
    if best.tokens_per_s < CLEAR_WIN * baseline.tokens_per_s:  # within the noise of a few runs: keep the default
        return "generate", probes
    return best.backend, probes


CLEAR_WIN = 1.1
"""How much faster than `generate` a backend must measure for `auto` to take it: on the tiny model on
CPU, static-cache against generate ranged 0.74-1.13x over five alternated pairs (median 0.92x), so a
smaller margin would pick by noise."""
