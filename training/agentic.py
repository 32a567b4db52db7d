"""Agentic GRPO: a plan whose dataset is terminal tasks (`dataset.tasks`) trained with
`trl.GRPOTrainer(environment_factory=…)`, each rollout a real episode in the sandbox.

TRL runs the turns: it resets a pooled `TerminalEnvironment` with the dataset row (`task_id`),
appends the task's instruction to the prompt, parses the model's `<tool_call>`s, runs `bash` and
feeds the answers back, until the model stops calling tools, `max_tool_calling_iterations` or the
completion length. The reward functions are the plan's (`training.terminal.rewards`), read off
the environments. Every episode is written as a Harbor trial (ATIF trajectory, per-milestone
results) under `<output_dir>/rollouts/<run_id>/` (a job per run: the store's run is the training
run); at each checkpoint and at the end they are ingested into the store with the run's metrics
(where each step's time went, the environment's part included) and coded by the environment, the
rules and the verifier.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from curriculab.planner.config import ConfigError, TrainingConfig
from curriculab.planner.portfolio import TERMINAL_REWARD_FUNCTIONS
from curriculab.training.grpo import TrainResult, _check_grpo_section, checkpoint_to_resume, run_id_for
from curriculab.training.models import TrainError, resolve_model, tiny_agent_model_dir
from curriculab.training.options import TrainOptions
from curriculab.training.terminal.suite import SuiteError, task_directories
from curriculab.training.terminal.trial import Turn, write_trial

WARM_UP_EPOCHS = 12
"""Epochs of the supervised warm-up (enough for the tiny model to write well-formed calls part of the time)."""
TINY_TURN_TOKENS = 96
"""Completion length for the tiny model (all turns of a rollout together)."""


def suite_paths(spec: str, base_dir: Path | None = None) -> dict[str, Path]:
    """Task id → task directory for a suite spec: `builtin` or a folder of task directories, found by
    the one rule every command uses (`suite.task_directories`)."""
    try:
        return task_directories(spec, base_dir)
    except SuiteError as exc:
        raise TrainError(f"dataset.tasks: {exc}") from None


def speaks_tool_format(model_dir: Path) -> bool:
    """Whether the model at `model_dir` was saved with the tool-calling chat format (warmed up here)."""
    import json

    from curriculab.training.terminal.chat import TOOL_CHAT_TEMPLATE

    for name in ("chat_template.jinja", "tokenizer_config.json"):
        path = model_dir / name
        if path.is_file():
            text = path.read_text()
            template = text if name.endswith(".jinja") else json.loads(text).get("chat_template")
            if template == TOOL_CHAT_TEMPLATE:
                return True
    return False


def warmed_agent_model(
    model: str,
    tasks: Mapping[str, Path],
    cache_dir: Path,
    announce: Callable[[str], None] | None = None,
    backend: str = "bwrap",
) -> tuple[str, str]:
    """(model directory, short name) of a model that can call the terminal's tool: the base model
    with the tool-calling chat format, fine-tuned on demonstration episodes of `tasks` (run on the
    episode `backend`; made once per base model and task set, cached)."""
    from curriculab.training.terminal.task import load_task
    from curriculab.training.terminal.warmup import (
        DEMONSTRATIONS_VERSION,
        demonstrations,
        verification_share,
        warm_up,
    )

    if model == "tiny":
        base, name = str(tiny_agent_model_dir(cache_dir)), "tiny-agent"
    else:
        base, _, name = resolve_model(model, cache_dir)
        if speaks_tool_format(Path(base)):  # a model trained here before (an earlier round's): no warm-up
            return base, name
    digest = hashlib.sha256("\n".join([base, str(WARM_UP_EPOCHS), str(DEMONSTRATIONS_VERSION)]).encode())
    for task_id, folder in sorted(tasks.items()):  # an edited task or solution makes other demonstrations
        digest.update(task_id.encode())
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    key = digest.hexdigest()[:10]
    target = cache_dir / "warmed" / f"{name}-{key}"
    if (target / "config.json").exists():
        return str(target), name
    demos = demonstrations([load_task(p) for p in tasks.values()], backend=backend)
    if not demos:
        raise TrainError("no task in the suite has a solution that passes: nothing to demonstrate for the warm-up")
    if announce:
        announce(
            f"warm-up: {len(demos)} demonstration episodes ({verification_share(demos):.0%} check their work), "
            f"{WARM_UP_EPOCHS} epochs of trl.SFTTrainer → {target}"
        )
    partial = target.with_name(target.name + ".partial")
    warm_up(base, demos, partial, epochs=WARM_UP_EPOCHS)
    partial.rename(target)
    return str(target), name


def bash_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The well-formed `bash` calls of an assistant message, in order: the ones the environment ran
    (TRL calls `bash(**arguments)`, so any other argument than `command` makes the call fail)."""
    calls = [c.get("function", c) for c in message.get("tool_calls") or []]
    return [
        c
        for c in calls
        if c.get("name") == "bash" and isinstance(c.get("arguments"), dict) and set(c["arguments"]) == {"command"}
    ]


def turns_of(messages: Sequence[Mapping[str, Any]], tokenizer: Any) -> list[Turn]:
    """The assistant turns of a TRL completion (its messages, tool answers between them) as trial
    turns: each `bash` call is the episode's next command; completion tokens counted by
    re-tokenising the turn's text and calls."""
    import json

    turns, next_command = [], 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = [c.get("function", c) for c in message.get("tool_calls") or []]
        sent = bash_calls(message)
        indices = list(range(next_command, next_command + len(sent)))
        next_command += len(sent)
        text = (message.get("content") or "") + "".join(json.dumps(c) for c in calls)
        turns.append(Turn(message.get("content") or None, indices, None, len(tokenizer(text)["input_ids"])))
    return turns


def trial_step(run_id: str, trial: str) -> int:
    """The training step the run's trial (its folder name, its trajectory id) was written at:
    `EpisodeLog` names them `<run_id>-<step>-<batch>-<index>`."""
    return int(trial.removeprefix(f"{run_id}-").split("-")[0])


@dataclass
class EpisodeLog:
    """Writes each scored batch's episodes as trials (a reward function's side job: TRL calls the
    rewards once per batch with the environments, before the next `reset`)."""

    directory: Path
    run_id: str
    model: str
    tokenizer: Any
    written: int = 0
    seconds: float = 0.0
    batches: dict[int, int] = field(default_factory=dict)
    unscored: int = 0
    """Episodes the first reward left unscored (None: the environment failed, not the agent)."""

    @property
    def job(self) -> Path:
        """The run's Harbor job folder: its name is the store's run_id."""
        return self.directory / self.run_id

    def __call__(self, environments: Sequence[Any], completions: Sequence[Any], step: int) -> None:
        started = time.perf_counter()
        job = self.job
        batch = self.batches[step] = self.batches.get(step, -1) + 1  # a step may score several batches
        for index, (environment, messages) in enumerate(zip(environments, completions)):
            if environment.task is None:
                continue
            commands = environment.commands
            turns = turns_of(messages, self.tokenizer)
            known = sum(len(t.commands) for t in turns)
            if known != len(commands):  # calls and commands do not pair up: one turn per command, or the turns alone
                turns = [Turn(None, [i]) for i in range(len(commands))] or [replace(t, commands=[]) for t in turns]
            write_trial(
                job,
                f"{self.run_id}-{step:05d}-{batch}-{index:02d}",
                environment.task,
                environment.result,
                model=self.model,
                turns=turns,
                started_at=commands[0].started_at if commands else None,
                finished_at=time.time(),
                told_at_once=True,
            )
            self.written += 1
        self.seconds += time.perf_counter() - started


def terminal_rewards(names: Sequence[str]) -> list[Callable[..., list[float | None]]]:
    """The plan's terminal reward functions, by name (a TrainError names any that is not one)."""
    from curriculab.training.terminal import rewards

    unknown = [n for n in names if n not in TERMINAL_REWARD_FUNCTIONS]
    if unknown:
        raise TrainError(
            f"reward.functions: {unknown} are not terminal rewards; use {', '.join(TERMINAL_REWARD_FUNCTIONS)}"
        )
    return [getattr(rewards, name) for name in names]


def logged_rewards(
    functions: Sequence[Callable[..., list[float | None]]], log: EpisodeLog
) -> list[Callable[..., list[float | None]]]:
    """The reward functions, the first also writing the batch's episodes."""
    first = functions[0]

    def recorded(environments, completions=None, trainer_state=None, **kwargs):
        scores = first(environments=environments, **kwargs)
        log.unscored += sum(score is None for score in scores)
        log(environments, completions or [[] for _ in environments], int(getattr(trainer_state, "global_step", 0)))
        return scores

    recorded.__name__ = first.__name__
    return [recorded, *functions[1:]]


def ingest_and_code(db_path: str, job: Path, run_id: str, metrics_path: Path | None = None) -> None:
    """Ingest the run's episodes (its job folder `job`) and the metrics it logged, and code what is
    new: the environment's, the rules' and the verifier's codes."""
    from curriculab.analysis.coding import run_environment_coder, run_rule_coders, run_verifier_coder
    from curriculab.analysis.ingest.pipeline import ingest
    from curriculab.analysis.store import Store
    from curriculab.training.callback import store_metrics

    with Store(db_path) as store:
        if metrics_path is not None:  # first: the metrics mark the run as training, not evaluation
            store_metrics(store, run_id, metrics_path)
        if not job.is_dir():
            return
        ingest(store, [job])
        if run_environment_coder(store, uncoded_only=True).trajectories:  # new episodes landed
            run_rule_coders(store, where=f"starts_with(trajectory_id, '{run_id}-')")  # this run's episodes
            run_verifier_coder(store, uncoded_only=True)


def _resume_from(output: Path, resume: bool, log: EpisodeLog) -> Path | None:
    """The checkpoint to resume from (the episodes and metrics of later steps dropped: they run
    again), or None for a fresh run."""
    import shutil

    from curriculab.training.callback import drop_metrics_after

    checkpoint = checkpoint_to_resume(output, resume)
    if checkpoint is None:
        return None
    step = int(checkpoint.name.split("-")[-1])
    for trial in log.job.glob(f"{log.run_id}-*"):
        if trial_step(log.run_id, trial.name) > step:
            shutil.rmtree(trial)
    drop_metrics_after(output / "metrics.jsonl", step)
    return checkpoint


def episode_backend(allow_unsandboxed: bool) -> str:
    """Where training episodes run: bubblewrap; where it does not work and `allow_unsandboxed` says
    so, the `namespaces` isolation (root only; bubblewrap's mounts made by hand, the same seccomp filter, no read-only submounts)."""
    from curriculab.training.sandbox import detect_backend

    if detect_backend() == "bwrap":
        return "bwrap"
    if not allow_unsandboxed:
        raise TrainError(
            "terminal episodes need bubblewrap, which does not work here (scripts/setup.sh installs it); "
            "pass --allow-unsandboxed to run them under namespaces and chroot (root; the same seccomp filter, weaker mounts)"
        )
    if os.geteuid() != 0:
        raise TrainError(
            "--allow-unsandboxed episodes (namespaces and chroot) need root: run as root or install bubblewrap"
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
    import pyarrow.parquet as pq
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig

    from curriculab.training.callback import MetricsLog, ProgressBar, TimeBudget, drop_library_progress
    from curriculab.training.quiet import LOG_NAME, library_output_to
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.timing import StepClock
    from curriculab.training.trainer import CurriculumGRPOTrainer

    if not isinstance(config, TrainingConfig):
        try:
            config = TrainingConfig.load(config)
        except ConfigError as exc:
            raise TrainError(str(exc)) from None
    if config.dataset.tasks is None:
        raise TrainError("the plan's dataset has no `tasks`: train it with `train`, or plan with --tasks")
    _check_grpo_section(config, GRPOConfig)
    tasks = suite_paths(config.dataset.tasks, config.base_dir)
    reward_functions = terminal_rewards(config.reward.functions)
    episodes = episode_backend(options.allow_unsandboxed)
    named = set(pq.read_table(config.dataset_path, columns=["task_id"]).column("task_id").to_pylist())
    if named - set(tasks):
        raise TrainError(
            f"dataset: tasks {sorted(named - set(tasks))[:5]} are not in the suite {config.dataset.tasks!r}"
        )
    output = Path(options.output_dir or config.grpo.get("output_dir") or "runs/agentic")
    grpo = dict(config.grpo)
    seed, plan_id = int(grpo.get("seed", 0)), config.plan.plan_id
    run_id = run_id_for(plan_id, seed, output)
    with library_output_to(output / LOG_NAME):
        path, base_name = warmed_agent_model(model, tasks, options.cache_dir, options.announce, episodes)
        setup_started = time.perf_counter()  # after the warm-up, which a cached model skips
        tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(path))
        tokenizer.padding_side = "left"
        label = options.model_label or base_name
        log = EpisodeLog(output / "rollouts", run_id, label, tokenizer)
        checkpoint = _resume_from(output, options.resume, log)
        metrics_path = output / "metrics.jsonl"
        cuda = torch.cuda.is_available() and not options.force_cpu
        dataset = load_dataset("parquet", data_files=str(config.dataset_path), split="train")
        dataset = dataset.map(lambda row: {"prompt": [{"role": "user", "content": ""}]})
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
        if model == "tiny":
            grpo["max_completion_length"] = min(int(grpo.get("max_completion_length", 512)), TINY_TURN_TOKENS)
        try:
            args = GRPOConfig(**grpo)
        except (TypeError, ValueError) as exc:
            raise TrainError(f"grpo section rejected by trl.GRPOConfig: {exc}") from None
        environments: list[TerminalEnvironment] = []
        clock = StepClock()

        def environment() -> TerminalEnvironment:
            made = TerminalEnvironment(tasks, backend=episodes, clock=clock)
            environments.append(made)
            return made

        db_path = options.db_path

        class IngestAtCheckpoints(TrainerCallback):
            """The episodes and metrics written so far ingested and coded at each checkpoint and at the end."""

            seconds = 0.0

            def _ingest(self) -> None:
                if db_path:
                    started = time.perf_counter()
                    ingest_and_code(db_path, log.job, run_id, metrics_path)
                    elapsed = time.perf_counter() - started
                    self.seconds += elapsed
                    clock.add(store_s=elapsed)

            def on_save(self, args, state, control, **kwargs):
                self._ingest()

            def on_train_end(self, args, state, control, **kwargs):
                self._ingest()

        ingesting = IngestAtCheckpoints()
        metrics = MetricsLog(None, metrics_path, clock, options.summary)
        budget = (
            [TimeBudget(options.stop_after_s, called, setup_started, lambda: 2 * ingesting.seconds)]
            if options.stop_after_s is not None
            else []
        )
        with _trl_experimental_notice_silenced():  # TRL warns that environment_factory is experimental
            trainer = CurriculumGRPOTrainer(
                model=AutoModelForCausalLM.from_pretrained(path),
                reward_funcs=logged_rewards(reward_functions, log),
                args=args,
                train_dataset=dataset,
                processing_class=tokenizer,
                environment_factory=environment,
                callbacks=[ProgressBar(), metrics, ingesting, *budget],
                clock=clock,
                written_s=lambda: log.seconds,
            )
        drop_library_progress(trainer)
        started = time.perf_counter()
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        seconds = time.perf_counter() - started
        trainer.save_model(str(output / "final"))
        tokenizer.save_pretrained(str(output / "final"))
        for made in environments:
            made.__exit__()  # not a public method: TRL would offer it to the model as a tool
    if log.unscored and options.announce:
        options.announce(
            f"{log.unscored} episode(s) unscored: the environment failed (not the agent); TRL left them out"
        )
    logs = next((h for h in reversed(trainer.state.log_history) if "reward" in h), {})
    return TrainResult(
        run_id=run_id,
        output_dir=str(output),
        steps=int(trainer.state.global_step),
        rollouts=log.written,
        seconds=seconds,
        store_seconds=log.seconds + ingesting.seconds + metrics.store_seconds,
        reward_seconds=trainer.reward_seconds,
        last_logs={k: v for k, v in logs.items() if isinstance(v, (int, float))},
        generation_backend="generate",
    )


@dataclass
class Evaluation:
    """Greedy episodes on held-out tasks."""

    episodes: int
    """Episodes run."""
    passed: int
    """Episodes that passed every milestone."""
    milestone_share: float
    """Mean share of milestones passed."""
    verified_share: float
    """Share of episodes that ran a check after their last change (of those that changed something)."""
    tool_calls: int
    """Commands run in all."""
    job_dir: str
    """Where the episodes were written as trials."""


def evaluate_agent(
    model_dir: str | Path,
    tasks: Mapping[str, Path],
    task_ids: Sequence[str],
    job_dir: Path,
    label: str,
    *,
    max_turns: int = 6,
    max_new_tokens: int = 96,
    trial_prefix: str = "eval",
    backend: str = "bwrap",
) -> Evaluation:
    """Run one greedy episode per held-out task with the model at `model_dir`, as TRL's turn loop
    would (the model's tool calls run in the episode until it stops calling or `max_turns`), and
    write each as a trial `<trial_prefix>-NN-<task>` under `job_dir` (stored under `label`). `backend`:
    the episode sandbox, the one training used (`episode_backend`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import get_json_schema

    from curriculab.taxonomy.coders.environment import INCIDENTAL, verified_after_last_edit
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.rewards import milestone_share

    tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(str(model_dir)))
    network = AutoModelForCausalLM.from_pretrained(str(model_dir)).eval()
    schema = [get_json_schema(TerminalEnvironment.bash)]
    passed, shares, verified, changed_any, calls = 0, [], 0, 0, 0
    with TerminalEnvironment(tasks, backend=backend) as environment:
        for index, task_id in enumerate(task_ids):
            instruction = environment.reset(task_id=task_id)
            messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
            turns: list[Turn] = []
            for _ in range(max_turns):
                prompt = tokenizer.apply_chat_template(
                    messages, tools=schema, add_generation_prompt=True, tokenize=False
                )
                ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
                with torch.no_grad():
                    out = network.generate(
                        **ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
                    )
                new = out[0][ids["input_ids"].shape[1] :].tolist()
                try:
                    reply = tokenizer.parse_response(new, prefix=ids["input_ids"][0].tolist())
                except (ValueError, TypeError):  # a malformed call is text, as TRL treats it
                    reply = {"role": "assistant", "content": tokenizer.decode(new, skip_special_tokens=True)}
                sent = bash_calls(reply)
                first = len(environment.commands)
                messages.append(
                    {"role": "assistant", "content": reply.get("content") or "", "tool_calls": reply.get("tool_calls")}
                )
                for call in sent:
                    answer = environment.bash(str(call["arguments"]["command"]))
                    messages.append({"role": "tool", "name": "bash", "content": answer})
                turns.append(
                    Turn(
                        reply.get("content") or None,
                        list(range(first, len(environment.commands))),
                        ids["input_ids"].shape[1],
                        len(new),
                    )
                )
                if not sent:
                    break
            result = environment.result
            commands = result.commands
            calls += len(commands)
            share = 0.0 if result.failure else milestone_share(result)  # scored as in training
            passed += int(share == 1.0)
            shares.append(share)
            if any(not INCIDENTAL.search(p) for c in commands for p in c.changed):
                changed_any += 1
                verified += int(verified_after_last_edit(commands))
            assert environment.task is not None
            write_trial(
                job_dir,
                f"{trial_prefix}-{index:02d}-{task_id}",
                environment.task,
                result,
                model=label,
                turns=turns,
                told_at_once=True,
            )
    return Evaluation(
        len(task_ids),
        passed,
        sum(shares) / len(shares) if shares else 0.0,
        verified / changed_any if changed_any else 0.0,
        calls,
        str(job_dir),
    )
