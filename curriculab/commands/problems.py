"""Problem sets and scoring: `problems export|check|retier` and `reward`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from curriculab.commands.common import (
    db_option,
    echo_json,
    emit,
    load_problem_set,
    open_store,
    output_options,
)
from curriculab.tables import safe_text
from curriculab.trajectory.vocabulary import TIERS


@click.command()
@click.option(
    "--problems",
    "problems_path",
    required=True,
    metavar="FILE|builtin|humaneval",
    help="Tiered problems (JSONL or Parquet), or a built-in set.",
)
@click.option(
    "--completions",
    "completions_path",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="JSONL of {problem_id, completion_id, completion}.",
)
@click.option(
    "--weights",
    default=None,
    help="basic=…,intermediate=…,complex=…,edge=… or a preset (uniform, basic-intermediate, complex-edge).",
)
@click.option(
    "--schedule",
    default="all",
    show_default=True,
    help="Active tiers: all, forward, reversed, static-<tier> (at the end of training).",
)
@click.option("--workers", type=int, default=None, help="Parallel sandboxes.")
@click.option("--test-timeout", type=float, default=5.0, show_default=True, help="Seconds one test may take.")
@click.option(
    "--allow-unsandboxed",
    is_flag=True,
    help="Score even where no sandbox works (rlimits only; model code could read the answer key).",
)
@output_options(default="json")
def reward(
    problems_path: str,
    completions_path: Path,
    weights: str | None,
    schedule: str,
    workers: int | None,
    test_timeout: float,
    allow_unsandboxed: bool,
    fmt: str,
) -> None:
    """Score completions against tiered tests in the sandbox.

    Prints one {completion_id, problem_id, reward, pass_rate: {tier: x}, status} per completion;
    status is `ok` or names the fault (timeout, memory, crashed, load_error, unsandboxed, ...).
    Code is taken from the last ```python block when there is one, else the whole text.

    \b
    Example:
      curriculab reward --problems builtin --completions samples.jsonl --weights basic=0.35,intermediate=0.35,complex=0.15,edge=0.15 --json
    """
    from curriculab.training.sandbox import Limits, prestart

    limits = Limits(test_timeout_s=test_timeout)
    prestart(limits)  # the sandboxes start while the rest is imported and the problems load
    from curriculab.planner.portfolio import TierCurriculum, parse_weights
    from curriculab.training.rewards import named_problem_ids, read_completions, score_completions

    curriculum = TierCurriculum(schedule=schedule, weights=parse_weights(weights))
    problems = load_problem_set(problems_path, only=named_problem_ids(completions_path))
    completions, refused = read_completions(completions_path, problems, problems_path)
    results = (
        score_completions(problems, completions, curriculum, limits, workers, allow_unsandboxed=allow_unsandboxed)
        if completions
        else []
    )
    if fmt == "json":
        echo_json(results)
    else:
        rows = [
            (
                r["completion_id"],
                r["problem_id"],
                None if r["reward"] is None else round(r["reward"], 3),
                *(None if r["pass_rate"][t] is None else round(r["pass_rate"][t], 2) for t in TIERS),
                r["status"],
            )
            for r in results
        ]
        emit(["completion_id", "problem_id", "reward", *TIERS, "status"], rows, fmt)
    for problem in refused:
        click.echo(f"  refused: {safe_text(problem)}", err=True)
    if refused:
        sys.exit(1)


@click.group()
def problems() -> None:
    """Tiered problem sets: export, check, re-tier from measured failure rates."""


@problems.command("export")
@click.argument("name", type=click.Choice(["builtin", "humaneval"]))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
def problems_export(name: str, output: Path) -> None:
    """Write a built-in set as tiered-problem JSONL, keeping only problems whose reference passes.

    \b
    Example:
      curriculab problems export humaneval -o humaneval.jsonl
    """
    from curriculab.training.problems import save_problems, verify_references

    kept, rejected = verify_references(load_problem_set(name))
    save_problems(kept, output)
    click.echo(
        f"Wrote {len(kept)} problems ({sum(len(p.tests) for p in kept)} tests) to {output}; {len(rejected)} rejected."
    )
    for line in rejected:
        click.echo(f"  rejected: {line}", err=True)


@problems.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--shape",
    required=True,
    type=click.Choice(["livecodebench", "codecontests", "apps"]),
    help="The public set whose record shape FILE has.",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
def problems_import(file: Path, shape: str, output: Path) -> None:
    """Convert a JSONL file in a public set's shape into tiered-problem JSONL: LeetCode-style
    `class Solution` problems and stdin/stdout programs (docs/sandbox-boundary.md). A bad record is
    named and skipped; a problem whose reference fails its own tests is rejected.

    \b
    Example:
      curriculab problems import lcb.jsonl --shape livecodebench -o lcb.problems.jsonl
    """
    from curriculab.training.problem_formats import read_problem_set
    from curriculab.training.problems import save_problems, verify_references

    errors: list[str] = []
    kept, rejected = verify_references(read_problem_set(file, shape, errors))
    save_problems(kept, output)
    click.echo(
        f"Wrote {len(kept)} problems ({sum(len(p.tests) for p in kept)} tests) to {output}; "
        f"{len(errors)} bad records, {len(rejected)} rejected."
    )
    for line in errors + rejected:
        click.echo(f"  {safe_text(line)}", err=True)


@problems.command("check")
@click.argument("file")
def problems_check(file: str) -> None:
    """Validate a problems file and run every reference against its tests (exit 1 if any fails).

    \b
    Example:
      curriculab problems check my_problems.jsonl
    """
    from collections import Counter

    from curriculab.training.problems import verify_references

    loaded = load_problem_set(file)
    kept, rejected = verify_references(loaded)
    tiers: Counter[str] = Counter(t.tier for p in kept for t in p.tests)
    click.echo(
        f"{len(kept)} of {len(loaded)} problems pass their reference; tests per tier: "
        + ", ".join(f"{t} {tiers.get(t, 0)}" for t in TIERS)
    )
    for line in rejected:
        click.echo(f"  rejected: {line}", err=True)
    if rejected:
        sys.exit(1)


@problems.command("retier")
@click.option("--problems", "problems_path", required=True, metavar="FILE|builtin|humaneval")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
@click.option("--min-runs", default=8, show_default=True, help="Tests seen fewer times keep their tier.")
@db_option
def problems_retier(problems_path: str, output: Path, min_runs: int) -> None:
    """Re-assign test tiers from measured failure rates in the store (rollouts' test_results;
    the rollout's task_id is the problem_id): difficulty measured, not authored.

    \b
    Example:
      curriculab problems retier --problems humaneval -o humaneval.retiered.jsonl
    """
    from collections import Counter

    from curriculab.analysis import queries
    from curriculab.training.problems import retier, save_problems

    loaded = load_problem_set(problems_path)
    with open_store(read_only=True) as store:
        counts = queries.test_result_counts(store)
    rates = {
        (task, test): (int(failed), int(runs)) for task, test, failed, runs in counts.itertuples(index=False, name=None)
    }
    updated = retier(loaded, rates, min_runs=min_runs)
    moved = sum(a.tier != b.tier for p, q in zip(loaded, updated) for a, b in zip(p.tests, q.tests))
    save_problems(updated, output)
    tiers = Counter(t.tier for p in updated for t in p.tests)
    click.echo(
        f"Re-tiered {moved} of {sum(len(p.tests) for p in loaded)} tests from measured failure rates; wrote {output} "
        f"({', '.join(f'{t} {tiers.get(t, 0)}' for t in ('basic', 'intermediate', 'complex', 'edge'))})."
    )
