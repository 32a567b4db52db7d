"""GRPO on a plan: a `TrainingConfig` (plan.yaml) → `trl.GRPOTrainer`, with the plan's reward
functions and weights, its schedule laid over the planned steps, live task sampling, the
curriculum callback, and every rollout written as a canonical trajectory, ingested and coded.

TRL does the optimisation; this module only wires the plan to it. Rollouts are written as JSONL
shards (one per step) under `<output_dir>/rollouts/` while training runs and ingested at each
checkpoint and at the end; ingest skips what it already holds, and a resumed run first drops
the shards of steps after its checkpoint (they are generated again), so the store holds each
rollout once.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.planner.config import TrainingConfig
from curriculab.planner.portfolio import LiveAllocation
from curriculab.training.generation import BACKENDS, CLEAR_WIN, BackendUnavailable, choose_backend
from curriculab.training.models import (
    CODE_INSTRUCTION,
    TINY_COMPLETION_TOKENS,
    TINY_NOTICE,
    TrainError,
    resolve_model,
)
from curriculab.training.options import TrainOptions
from curriculab.training.quiet import LOG_NAME, library_output_to
from curriculab.training.rollouts import RolloutWriter
from curriculab.training.run import (
    TrainResult,
    check_grpo_section,
    checkpoint_to_resume,
    grpo_arguments,
    loaded_plan,
    process_rank,
    run_id_for,
)
from curriculab.training.timing import StepClock

if TYPE_CHECKING:
    from curriculab.training.problems import Problem


def train(
    config: TrainingConfig | Path | str,
    model: str = "tiny",
    options: TrainOptions | None = None,
    **changes: Any,
) -> TrainResult:
    """Train `model` with GRPO on a plan (a `TrainingConfig`, or the path of its plan.yaml), run as
    `options` say (a `TrainOptions`; its fields may also be given as keywords, which override it).
    The plan's `grpo:` section is checked against `trl.GRPOConfig` before any model loads; rollouts
    and metrics go to `options.db_path`. `options.stop_after_s` is a time budget for the call:
    training stops early enough that setup, the steps and the run's end (checkpoint, rollouts and
    metrics stored) fit in it, the end estimated as long as the setup took. The generation backend
    `auto` measures (once per machine, model and shape; cached) and takes the fastest where it
    clearly beats `generate`."""
    entered = time.perf_counter()
    try:
        options = replace(options, **changes) if options is not None else TrainOptions(**changes)
    except TypeError as exc:  # an unknown keyword
        raise TrainError(f"{exc}; the options are TrainOptions' fields") from None
    import torch
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig

    from curriculab.training.callback import drop_library_progress, run_callbacks
    from curriculab.training.rewards import make_reward_functions
    from curriculab.training.sampling import LiveSamplingSettings, ProblemStats
    from curriculab.training.sandbox import Limits
    from curriculab.training.trainer import CurriculumGRPOTrainer

    imported = time.perf_counter()
    plan, problems = _checked_plan(config)
    check_grpo_section(plan, GRPOConfig)
    summary, announce = options.summary, options.announce
    output = Path(options.output_dir or plan.grpo.get("output_dir") or "runs/grpo")
    with library_output_to(output / LOG_NAME):  # one bar and one line per step on the terminal
        path, load_kwargs, base_name = resolve_model(model, options.cache_dir)
        tokenizer, dataset = _tokenizer_and_dataset(plan, path, load_kwargs)
        section = plan.curriculum
        dynamic_on = section.dynamic.enabled if options.dynamic is None else options.dynamic
        live_on = section.live_sampling.enabled if options.live_sampling is None else options.live_sampling
        rank = process_rank(live_on, options.stop_after_s)
        if rank != 0:  # rank 0 speaks for the run
            summary = announce = None
        seed, plan_id = int(plan.grpo.get("seed", 0)), plan.plan.plan_id
        run_id = run_id_for(plan_id, seed, output)
        stop_ids = tuple(i for i in {tokenizer.eos_token_id, tokenizer.pad_token_id} if i is not None)
        writer = RolloutWriter(
            output / "rollouts",
            run_id,
            base_name,
            {p.problem_id: p for p in problems},
            {
                "plan_id": plan_id,
                "seed": seed,
                "model": model,
                "live_sampling": live_on,
                "reward_functions": plan.reward.functions,
                "reward_weights": plan.reward.weights,
            },
            options.model_label,
            stop_ids,
            rank=rank,
        )
        checkpoint = _resume_from(output, options.resume, writer, rank)
        cuda = torch.cuda.is_available() and not options.force_cpu
        completion_cap = TINY_COMPLETION_TOKENS if model == "tiny" else None
        completion_tokens = int(plan.grpo.get("max_completion_length", 256))
        network = AutoModelForCausalLM.from_pretrained(path, **load_kwargs)
        backend, why = pick_backend(
            options.backend_asked,
            cuda,
            network,
            tokenizer,
            dataset,
            int(plan.grpo.get("num_generations", 8)),
            min(completion_tokens, completion_cap or completion_tokens),
            architecture_key(network),
            options.cache_dir,
        )
        if announce:
            announce(why)
            if model == "tiny":
                announce(TINY_NOTICE)
        writer.run_config["generation_backend"] = backend  # stored with the run, beside plan and seed
        args = grpo_arguments(
            plan, options, output, cuda, completion_cap=completion_cap, backend=dict(BACKENDS[backend])
        )
        sampling = section.live_sampling
        stats = ProblemStats(
            args.num_generations, LiveSamplingSettings(True, sampling.decay, sampling.sharpness, sampling.floor)
        )
        curriculum = section.tier_curriculum()
        live = LiveAllocation()  # the dynamic schedule's α: the callback writes it, the rewards read it
        clock = StepClock()
        reward_funcs = make_reward_functions(
            problems,
            curriculum,
            Limits(),
            allow_unsandboxed=options.allow_unsandboxed,
            on_scored=writer,
            names=plan.reward.functions,
            planned_steps=section.planned_steps,
            stats=stats,
            live=live,
        )
        callbacks = run_callbacks(
            curriculum,
            writer,
            options.db_path,
            run_id,
            output / "metrics.jsonl",
            dynamic=section.dynamic.settings() if dynamic_on else None,
            summary=summary,
            stats=stats,
            clock=clock,
            stop_after_s=options.stop_after_s,
            started=entered,
            setup_started=imported,
            main_process=rank == 0,
            live=live,
        )
        trainer = CurriculumGRPOTrainer(
            model=network,
            reward_funcs=reward_funcs,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=list(callbacks),
            live_stats=stats if live_on else None,
            clock=clock,
            written_s=lambda: writer.seconds,
        )
        drop_library_progress(trainer)
        started = time.perf_counter()
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        seconds = time.perf_counter() - started
        rollouts = sum(1 for shard in writer.directory.glob("step-*.jsonl") for _ in shard.open())
        logs = next((h for h in reversed(trainer.state.log_history) if "reward" in h), {})
        return TrainResult(
            run_id=run_id,
            output_dir=str(output),
            steps=int(trainer.state.global_step),
            rollouts=rollouts,
            seconds=seconds,
            store_seconds=writer.seconds + callbacks.store_seconds,
            reward_seconds=trainer.reward_seconds,
            last_logs={k: v for k, v in logs.items() if isinstance(v, (int, float))},
            planned_steps=section.planned_steps,
            all_same_share=stats.all_same / stats.groups if stats.groups else None,
            generation_backend=backend,
            main_process=rank == 0,
        )


def _checked_plan(config: TrainingConfig | Path | str) -> tuple[TrainingConfig, list[Problem]]:
    """The plan and its problems, or a TrainError naming what is wrong (before any run folder exists)."""
    from curriculab.training.problems import ProblemError, load_problem_set

    plan = loaded_plan(config)
    try:
        problems = load_problem_set(plan.dataset.problems)
    except ProblemError as exc:
        raise TrainError(f"dataset.problems: {exc}") from None
    if not plan.dataset_path.exists():
        raise TrainError(f"dataset.path: {plan.dataset_path} does not exist. Export the plan with `curriculab plan -o`")
    return plan, problems


def _tokenizer_and_dataset(config: TrainingConfig, path: str, load_kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The tokenizer (left padding, as GRPO generates) and the plan's dataset, its prompts in the
    model's chat format when it has one."""
    from datasets import load_dataset
    from transformers import AutoTokenizer

    dataset = load_dataset("parquet", data_files=str(config.dataset_path), split="train")
    tokenizer = AutoTokenizer.from_pretrained(path, **load_kwargs)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(tokenizer, "chat_template", None):
        dataset = dataset.map(lambda row: {"prompt": [{"role": "user", "content": CODE_INSTRUCTION + row["prompt"]}]})
    return tokenizer, dataset


def _resume_from(output: Path, resume: bool, writer: RolloutWriter, rank: int) -> Path | None:
    """The checkpoint to resume from (its later rollouts and metrics dropped, to be made again), or
    None for a fresh run."""
    from curriculab.training.callback import drop_metrics_after

    checkpoint = checkpoint_to_resume(output, resume)
    if checkpoint is None:
        return None
    step = int(checkpoint.name.split("-")[-1])
    writer.drop_after(step)  # each rank its own shards
    if rank == 0:
        drop_metrics_after(output / "metrics.jsonl", step)
    return checkpoint


def pick_backend(
    requested: str,
    cuda: bool,
    network: Any,
    tokenizer: Any,
    dataset: Any,
    n_prompts: int,
    completion_tokens: int,
    model_key: str,
    cache_dir: Path,
) -> tuple[str, str]:
    """(backend, a line saying which and why). `auto` reuses a measurement made on this machine for
    the same model, device, library versions and batch shape, and otherwise measures now."""
    import json

    import torch
    import transformers

    if requested != "auto":
        try:
            return choose_backend(requested, cuda)[0], f"generation: {requested} (asked for)"
        except BackendUnavailable as exc:
            raise TrainError(f"{exc}. Choose another --generation-backend, or leave it at auto") from None
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    new_tokens = min(completion_tokens, 32)  # long enough to be decode-bound, short enough to cost seconds
    key = "|".join(map(str, (device, model_key, torch.__version__, transformers.__version__, n_prompts, new_tokens)))
    record = cache_dir / "generation-backends.json"
    try:
        known = json.loads(record.read_text())
    except (OSError, ValueError):
        known = {}
    if key not in known:
        prompts = [
            _prompt_text(row, tokenizer) for row in dataset.select(range(min(n_prompts, len(dataset))))["prompt"]
        ]
        if cuda:
            network.to("cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            chosen, probes = choose_backend("auto", cuda, network, tokenizer, prompts, new_tokens)
        known[key] = {"chosen": chosen, "tokens_per_s": {p.backend: round(p.tokens_per_s, 1) for p in probes}}
        how = "measured now"
        try:  # whole or not at all (two runs may start at once); a read-only cache only means measuring again
            record.parent.mkdir(parents=True, exist_ok=True)
            partial = record.with_name(f"{record.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps(known, indent=1))
            os.replace(partial, record)
        except OSError:
            how = "measured now; not kept: the cache folder is not writable"
    else:
        how = f"measured earlier, {record}"
    speeds = ", ".join(f"{name} {rate:,.0f}" for name, rate in known[key]["tokens_per_s"].items())
    chosen = known[key]["chosen"]
    verdict = "fastest here" if chosen != "generate" else f"none measured {CLEAR_WIN - 1:.0%} faster than generate here"
    return chosen, f"generation: {chosen} (auto, {verdict}; tokens/s {speeds}; {how})"


def architecture_key(network: Any) -> str:
    """What a generation speed depends on: the architecture's config and dtype, not the weights or the
    folder (a loop's round-2 checkpoint of the same model reuses round 1's measurement). A trainer saves
    `use_cache: false` in its checkpoints' config; generation follows its own config, which keeps it on."""
    import hashlib
    import json

    runtime = {"transformers_version", "use_cache"}
    config = {k: v for k, v in network.config.to_dict().items() if not k.startswith("_") and k not in runtime}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{network.config.model_type}:{network.dtype}:{digest}"


def _prompt_text(prompt: str | list[dict[str, str]], tokenizer: Any) -> str:
    if isinstance(prompt, list):  # chat messages
        return str(tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True))
    return prompt
