"""Planning: `plan`, `plan show`, `plan diff`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from curriculab.commands.common import (
    CliError,
    db_option,
    db_path,
    emit,
    err_console,
    health_note,
    load_problem_set,
    open_store,
    output_options,
)
from curriculab.planner.portfolio import STRATEGIES
from curriculab.tables import safe_text

if TYPE_CHECKING:
    from curriculab.planner.plan import Plan, ProblemPlan


def _fit_difficulty() -> None:
    """Fit measured difficulty (IRT) and store it, saying so on stderr: what `curriculab difficulty`
    does, done for a plan that needs the model's fitted ability."""
    from curriculab.analysis.difficulty import fit_store

    with open_store(read_only=False, create=False) as store:
        with err_console().status("No difficulty fit stored: fitting one (IRT) on every judged attempt…"):
            fit = fit_store(store)
        kept_out = health_note(store)
    err_console().print(
        f"Fitted difficulty on {len(fit.tasks):,} tasks and {len(fit.models):,} models "
        f"(stored, as `curriculab difficulty` would).{kept_out}",
        soft_wrap=True,
    )


@click.group(invoke_without_command=True)
@click.option(
    "--model", "target", default=None, help="The model to plan for (as the store names it), its systems pooled."
)
@click.option(
    "--system",
    "system",
    default=None,
    metavar='"AGENT · MODEL"',
    help="The one system (agent · model, as the report names it) to plan for: its failure codes and time.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write plan.yaml here, with its dataset (.parquet) beside it.",
)
@click.option(
    "--problems",
    "problems_path",
    default="builtin",
    show_default=True,
    metavar="builtin|humaneval|FILE",
    help="The tiered problem set the curriculum draws from.",
)
@click.option(
    "--capability",
    "prior",
    type=click.Choice(["weak", "strong"]),
    default=None,
    help="Prior to use when the store has no evidence on the model.",
)
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="tarot",
    show_default=True,
    help="Tier-weighted reward, or one of TAROT's baselines.",
)
@click.option(
    "--coder",
    "coders",
    multiple=True,
    default=("rules", "verifier"),
    show_default=True,
    help="Whose failure codes to act on (repeat for several).",
)
@click.option(
    "--group-size", type=int, default=8, show_default=True, help="GRPO num_generations (for the zero-variance guard)."
)
@click.option(
    "--weak-below", type=float, default=0.65, show_default=True, help="Capability under which a model is weak."
)
@click.option(
    "--strong-from", type=float, default=0.75, show_default=True, help="Capability from which a model is strong."
)
@click.option(
    "--tasks",
    "suite",
    default=None,
    metavar="builtin|DIR",
    help="Plan agentic training on this terminal task suite (Harbor task directories) instead of problems.",
)
@click.option(
    "--held-out", "held_out", multiple=True, metavar="TASK", help="With --tasks: keep this task out of training."
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@db_option
@click.pass_context
def plan(
    ctx: click.Context,
    target: str | None,
    system: str | None,
    output: Path | None,
    problems_path: str,
    prior: str | None,
    strategy: str,
    coders: tuple[str, ...],
    group_size: int,
    weak_below: float,
    strong_from: float,
    suite: str | None,
    held_out: tuple[str, ...],
    as_json: bool,
) -> None:
    """Plan the next round of training for a model: schedule, weights, task mix, and why.

    Reads the store, stores the plan in `plans` and, with -o, writes plan.yaml (sections grpo,
    curriculum, dataset, reward, scale) and its dataset. `plan show` and `plan diff` read stored plans.

    \b
    Example:
      curriculab plan --model atlas-7b-coder -o plans/atlas.yaml
      curriculab plan show
      curriculab plan diff 4a290fc730cc f71c2afa8e7e
      curriculab plan --model tiny-agent --tasks builtin -o plans/agent.yaml
      curriculab plan --system "goose · claude-opus-4-20250514" -o plans/goose.yaml

    \b
    The plan's kind follows the data: a model or system whose attempts are agent episodes
    (Terminal-Bench runs, Harbor jobs) gets a task plan over terminal tasks (the built-in suite
    unless --tasks names another); --problems asks for a problem plan instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    from curriculab.planner import plan as planning
    from curriculab.planner.evidence import NeedsFit
    from curriculab.planner.portfolio import Thresholds

    if suite is not None and system is None and target is not None and not Path(db_path()).exists():
        # a first task plan, for an agent with no attempts stored yet: nothing to read (plan --tasks
        # makes the store it records the plan in)
        agent, episodes = None, False
    else:
        with open_store(read_only=True, create=False) as store:
            agent, target, episodes = planning.plan_target(store, target, system)
    asked_for_problems = ctx.get_parameter_source("problems_path") != click.core.ParameterSource.DEFAULT
    if suite is None and episodes and not asked_for_problems:
        suite = "builtin"  # an agent's attempts: it trains on terminal tasks, not single completions
        err_console().print(
            f"{system or target}: its attempts are agent episodes, so this is a task plan over the built-in "
            "terminal suite (--tasks DIR for another; --problems for a problem plan of single completions).",
            soft_wrap=True,
        )
    if suite is not None:
        default_coders = ctx.get_parameter_source("coders") == click.core.ParameterSource.DEFAULT
        _plan_tasks(target, suite, held_out, None if default_coders else coders, output, as_json, agent)
        return
    if held_out:
        raise CliError("--held-out keeps tasks out of a task plan: give --tasks SUITE too")
    problems = load_problem_set(problems_path)
    thresholds = Thresholds(weak_below=weak_below, strong_from=strong_from, group_size=group_size)

    def build() -> ProblemPlan:
        with open_store(read_only=True, create=False) as store:
            return planning.build_plan(
                store,
                target,
                problems,
                problems_path,
                prior=prior,
                coders=coders,
                thresholds=thresholds,
                strategy=strategy,
                agent=agent,
            )

    try:
        made = build()
    except NeedsFit:  # no tiered results (e.g. Terminal-Bench): the ability comes from a fit, made now
        _fit_difficulty()
        made = build()
    if episodes:  # asked for: say what a problem plan trains of an agent
        made.reasons.append(
            f"a problem plan for {system or target}, whose attempts are agent episodes, as asked (--problems): it "
            "trains the model's single completions on function problems, not the agent's work in a terminal "
            "(a task plan does: drop --problems)"
        )
        made.plan_id = made.content_id()
    if output is not None:
        planning.export(made, output, problems)
    with open_store(read_only=False, create=False) as store:
        planning.save(store, made)
    for reason in made.reasons:
        if reason.startswith(planning.POOLING_WARNING):
            click.echo(safe_text(reason), err=True)
    _print_plan(made, as_json)
    if output is not None and not as_json:
        click.echo(f"wrote {output} and its dataset {output.with_suffix('.parquet')}")


def _plan_tasks(
    target: str,
    suite: str,
    held_out: tuple[str, ...],
    coders: tuple[str, ...] | None,
    output: Path | None,
    as_json: bool,
    agent: str | None = None,
) -> None:
    """`plan --tasks`: store the suite's tasks, plan over them, export plan.yaml for `train`."""
    from curriculab.analysis.ingest import ingest
    from curriculab.planner import plan as planning
    from curriculab.planner.tasks import TASK_CODERS, build_task_plan, export_task_plan
    from curriculab.training.terminal.suite import task_directories

    paths = task_directories(suite)
    unknown = sorted(set(held_out) - set(paths))
    if unknown:
        raise CliError(
            f"--held-out: {', '.join(unknown)} not in the suite {suite} (its tasks: {', '.join(sorted(paths)[:5])}, …)"
        )
    with open_store(read_only=False) as store:
        ingest(store, [str(p) for p in paths.values()], "tasks")
        made = build_task_plan(
            store, target, suite, sorted(paths), held_out=held_out, coders=coders or TASK_CODERS, agent=agent
        )
        planning.save(store, made)
    if output is not None:
        export_task_plan(made, output)
    _print_plan(made, as_json)
    if output is not None and not as_json:
        click.echo(
            f"wrote {output} and its dataset {output.with_suffix('.parquet')} (train it: curriculab train --config {output})"
        )


@plan.command("show")
@click.argument("plan_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@db_option
def plan_show(plan_id: str | None, as_json: bool) -> None:
    """Explain a stored plan (the newest when no id is given)."""
    from curriculab.planner import plan as planning

    with open_store(read_only=True, create=False) as store:
        stored = planning.load(store, plan_id)
    _print_plan(stored, as_json)


def _print_plan(plan: Plan, as_json: bool) -> None:
    """A plan as JSON, or explained: its headline, then one line per decision."""
    from curriculab.planner.plan import explain

    if as_json:
        click.echo(plan.model_dump_json(indent=2))
        return
    lines = explain(plan)
    click.echo(safe_text(lines[0]))
    for line in lines[1:]:
        click.echo(f"  - {safe_text(line)}")


@plan.command("diff")
@click.argument("first")
@click.argument("second")
@output_options()
@db_option
def plan_diff(first: str, second: str, fmt: str) -> None:
    """What changed between two stored plans."""
    from curriculab.planner import plan as planning

    with open_store(read_only=True, create=False) as store:
        a, b = planning.load(store, first), planning.load(store, second)
    rows = planning.diff(a, b)
    if not rows and fmt == "table":
        click.echo(f"plans {first} and {second} make the same choices")
        return
    emit(["what", first, second], rows, fmt)
