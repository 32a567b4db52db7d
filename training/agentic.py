"""Agentic GRPO: a plan whose dataset is terminal tasks (`dataset.tasks`) trained with
`trl.GRPOTrainer(environment_factory=…)`, each rollout a real episode in the sandbox.

TRL runs the turns: it resets a pooled `TerminalEnvironment` with the dataset row (`task_id`),
appends the task's instruction to the prompt, parses the model's `<tool_call>`s, runs `bash` and
feeds the answers back, until the model stops calling tools, `max_tool_calling_iterations` or the
completion length. The reward functions are the plan's (`training.terminal.rewards`), read off
the environments. The run is built as a problem plan's is (`training.run`: the plan checked, run
id, resume, `GRPOConfig`, result); what is the agent's own lives beside it in `training.terminal`:
the suite (`suite`), the warm-up and its cache (`warmup`), the episode log the trainer calls after
each batch's rewards, writing Harbor trials under `<output_dir>/rollouts/<run_id>/` that are
ingested and coded at each checkpoint and at the end (`episode_log`), and the held-out evaluation
(`evaluation`). On several processes (`accelerate launch`) each rank runs its own episodes,
numbered after the lower ranks', and rank 0 alone ingests, trims on resume and reports.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from curriculab.planner.config import TrainingConfig
from curriculab.planner.portfolio import TERMINAL_REWARD_FUNCTIONS
from curriculab.training.models import TrainError
from curriculab.training.options import TrainOptions
from curriculab.training.run import (
    TrainResult,
    check_grpo_section,
    checkpoint_to_resume,
    grpo_arguments,
    loaded_plan,
    process_rank,
    run_id_for,
)
from curriculab.training.terminal.suite import SuiteError, task_directories

TINY_TURN_TOKENS = 96
"""Completion length for the tiny model (all turns of a rollout together)."""


def terminal_rewards(names: Sequence[str]) -> list[Callable[..., list[float | None]]]:
    """The plan's terminal reward functions, by name (a TrainError names any that is not one)."""
    from curriculab.training.terminal import rewards

    unknown = [n for n in names if n not in TERMINAL_REWARD_FUNCTIONS]
    if unknown:
        raise TrainError(
            f"reward.functions: {unknown} are not terminal rewards; use {', '.join(TERMINAL_REWARD_FUNCTIONS)}"
        )
    return [getattr(rewards, name) for name in names]


def episode_backend(allow_unsandboxed: bool) -> str:
    """Where training episodes run: bubblewrap; where it does not work and `allow_unsandboxed` says
    so, the `namespaces` sandbox (root only; bubblewrap's mounts made by hand, the same seccomp
    filter, no read-only submounts), chosen as completions' is (`sandbox.unsandboxed_backend`)."""
    from curriculab.training.sandbox import detect_backend, unsandboxed_backend

    if detect_backend() == "bwrap":
        return "bwrap"
    if not allow_unsandboxed:
        raise TrainError(
            "terminal episodes need bubblewrap, which does not work here (scripts/setup.sh installs it); "
            "pass --allow-unsandboxed to run them under namespaces and chroot (root; the same seccomp filter, weaker mounts)"
        )
    if unsandboxed_backend() != "namespaces":
        raise TrainError(
            "--allow-unsandboxed episodes (namespaces and chroot) need root and util-linux's unshare: "
            "run as root or install bubblewrap"
        )
    return "namespaces"


AGENTIC_BACKENDS = ("auto", "generate")
"""Generation backends agentic GRPO runs: TRL's tool-call loop generates with transformers' `generate`
here (`auto` picks it); the others are measured and run for problem plans only."""


def _refuse_problem_options(options: TrainOptions) -> None:
    """A problem plan's options given for a task plan: refused, each saying why (none is dropped)."""
    if options.backend_asked not in AGENTIC_BACKENDS:
        raise TrainError(
            f"a task plan trains agents with TRL's tool-call loop, which generates with transformers' generate here: "
            f"the {options.backend_asked} backend is for problem plans. Leave --generation-backend at auto (or "
            "generate) and drop --use-vllm"
        )
    for name, flag in (("dynamic", "--dynamic/--schedule"), ("live_sampling", "--live-sampling/--static-sampling")):
        if getattr(options, name) is not None:
            raise TrainError(
                f"{flag} steers a problem plan's tier schedule; a task plan has none (its tasks are weighted in "
                "the plan's task mix): drop the option"
            )


@contextmanager
def _trl_experimental_notice_silenced() -> Iterator[None]:
    """TRL's notice that `environment_factory` is experimental, silenced while this run builds its trainer
    only (TRL reads TRL_EXPERIMENTAL_SILENCE there); the process's setting is left as it was."""
    before = os.environ.get("TRL_EXPERIMENTAL_SILENCE")
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TRL_EXPERIMENTAL_SILENCE"]
        else:
            os.environ["TRL_EXPERIMENTAL_SILENCE"] = before


def train_agent(
    config: TrainingConfig | Path | str,
    model: str = "tiny",
    options: TrainOptions | None = None,
    **changes: Any,
) -> TrainResult:
    """Train `model` with agentic GRPO on a terminal-task plan (`dataset.tasks` set): a warm-up
    where the model does not yet speak the tool format, then `GRPOTrainer(environment_factory=…)`
    with the plan's rewards; the episodes land in `options.db_path`, coded. Same options as `train`.
    The plan's tasks and reward names are checked before anything heavy loads."""
    called = time.perf_counter()  # the time budget counts the whole call
    try:
        options = replace(options, **changes) if options is not None else TrainOptions(**changes)
    except TypeError as exc:
        raise TrainError(f"{exc}; the options are TrainOptions' fields") from None
    _refuse_problem_options(options)  # before seconds of imports
    rank = process_rank(False, options.stop_after_s)
    main = rank == 0  # rank 0 speaks for the run, trims on resume and stores what every rank wrote
    import pyarrow.parquet as pq
    import torch
    from accelerate import PartialState
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from curriculab.training.callback import (
        IngestAtSaves,
        MetricsLog,
        ProgressBar,
        TimeBudget,
        drop_library_progress,
        drop_metrics_after,
    )
    from curriculab.training.quiet import LOG_NAME, library_output_to
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.episode_log import EpisodeLog, ingest_and_code, trim_after
    from curriculab.training.terminal.warmup import warmed_agent_model
    from curriculab.training.timing import StepClock
    from curriculab.training.trainer import CurriculumGRPOTrainer

    config = loaded_plan(config)
    if config.dataset.tasks is None:
        raise TrainError("the plan's dataset has no `tasks`: train it with `train`, or plan with --tasks")
    check_grpo_section(config, GRPOConfig)
    try:
        tasks = task_directories(config.dataset.tasks, config.base_dir)
    except SuiteError as exc:
        raise TrainError(f"dataset.tasks: {exc}") from None
    reward_functions = terminal_rewards(config.reward.functions)
    episodes = episode_backend(options.allow_unsandboxed)
    named = set(pq.read_table(config.dataset_path, columns=["task_id"]).column("task_id").to_pylist())
    if named - set(tasks):
        raise TrainError(
            f"dataset: tasks {sorted(named - set(tasks))[:5]} are not in the suite {config.dataset.tasks!r}"
        )
    output = Path(options.output_dir or config.grpo.get("output_dir") or "runs/agentic")
    run_id = run_id_for(config.plan.plan_id, int(config.grpo.get("seed", 0)), output)
    announce = options.announce if main else None
    cuda = torch.cuda.is_available() and not options.force_cpu
    args = grpo_arguments(config, options, output, cuda, completion_cap=TINY_TURN_TOKENS if model == "tiny" else None)
    with library_output_to(output / LOG_NAME):
        with args.main_process_first(desc="warm-up"):  # one process warms up and caches; the others read it
            path, base_name = warmed_agent_model(model, tasks, options.cache_dir, announce, episodes)
        setup_started = time.perf_counter()  # after the warm-up, which a cached model skips
        tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(path))
        tokenizer.padding_side = "left"
        label = options.model_label or base_name
        log = EpisodeLog(output / "rollouts", run_id, label, tokenizer, rank=rank)
        metrics_path = output / "metrics.jsonl"
        checkpoint = checkpoint_to_resume(output, options.resume)
        if checkpoint is not None and main:  # the episodes and metrics of later steps run again
            step = int(checkpoint.name.split("-")[-1])
            trim_after(log, step)
            drop_metrics_after(metrics_path, step)
        dataset = load_dataset("parquet", data_files=str(config.dataset_path), split="train")
        dataset = dataset.map(lambda row: {"prompt": [{"role": "user", "content": ""}]})
        environments: list[TerminalEnvironment] = []
        clock = StepClock()

        def environment() -> TerminalEnvironment:
            made = TerminalEnvironment(tasks, backend=episodes, clock=clock)
            environments.append(made)
            return made

        db_path = options.db_path
        ingesting = IngestAtSaves(
            (lambda: ingest_and_code(db_path, log.job, run_id, metrics_path)) if db_path and main else None,
            clock,
            wait=PartialState().wait_for_everyone,
        )
        metrics = MetricsLog(None, metrics_path, clock, options.summary if main else None, main_process=main)
        budget = (
            [TimeBudget(options.stop_after_s, called, setup_started, lambda: 2 * ingesting.seconds)]
            if options.stop_after_s is not None
            else []
        )
        with _trl_experimental_notice_silenced():  # TRL warns that environment_factory is experimental
            trainer = CurriculumGRPOTrainer(
                model=AutoModelForCausalLM.from_pretrained(path),
                reward_funcs=reward_functions,
                args=args,
                train_dataset=dataset,
                processing_class=tokenizer,
                environment_factory=environment,
                callbacks=[ProgressBar(main), metrics, ingesting, *budget],
                clock=clock,
                written_s=lambda: log.seconds,
                episode_hooks=[log],
            )
        drop_library_progress(trainer)
        started = time.perf_counter()
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        seconds = time.perf_counter() - started
        trainer.save_model(str(output / "final"))  # the main process writes it
        if main:
            tokenizer.save_pretrained(str(output / "final"))
        for made in environments:
            made.__exit__()  # not a public method: TRL would offer it to the model as a tool
    if log.unscored and announce:
        announce(f"{log.unscored} episode(s) unscored: the environment failed (not the agent); TRL left them out")
    logs = next((h for h in reversed(trainer.state.log_history) if "reward" in h), {})
    return TrainResult(
        run_id=run_id,
        output_dir=str(output),
        steps=int(trainer.state.global_step),
        rollouts=sum(1 for trial in log.job.iterdir() if trial.is_dir()) if log.job.is_dir() else 0,  # every rank's
        seconds=seconds,
        store_seconds=log.seconds + ingesting.seconds + metrics.store_seconds,
        reward_seconds=trainer.reward_seconds,
        last_logs={k: v for k, v in logs.items() if isinstance(v, (int, float))},
        generation_backend="generate",
        main_process=main,
    )
