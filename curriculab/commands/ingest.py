"""Getting trajectories in: `ingest` and `simulate`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from curriculab.commands.common import db_option, echo_json, err_console, open_store
from curriculab.tables import safe_text
from curriculab.trajectory.vocabulary import SOURCE_FORMATS


@click.command()
# readable=False: click.Path checks readability by default and refuses the whole call for one
# unreadable path; ingest quarantines that path and reads the rest
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format",
    "fmt",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", *SOURCE_FORMATS]),
    help="Input format; auto detects it per file or directory.",
)
@click.option(
    "--workers", type=int, default=None, help="Reader processes (default: one per core this process may use)."
)
@click.option(
    "--replace",
    is_flag=True,
    help="Replace stored trajectories whose id comes again with other content (their codes go with them).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Read every input again, even those whose files' sizes and times are unchanged since a clean read.",
)
@click.option(
    "--agent",
    default=None,
    help="Record this agent for every run read in this call (files that name none, or the wrong one).",
)
@click.option(
    "--model", default=None, help="Record this model for every run read in this call (e.g. a null `model_name`)."
)
@click.option(
    "--identities",
    "identities_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="YAML list of {path: <glob over the input path>, agent: ..., model: ...}: who ran which runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
def ingest(
    paths: tuple[Path, ...],
    fmt: str,
    workers: int | None,
    replace: bool,
    verify: bool,
    agent: str | None,
    model: str | None,
    identities_file: Path | None,
    as_json: bool,
) -> None:
    """Ingest trajectories: Harbor jobs, ATIF, tb runs, SWE-agent, Inspect logs, JSONL.

    Directories are walked. Bad inputs are quarantined in `ingest_errors` (exit 1), and every
    valid input of the same call still lands. Re-ingesting unchanged files is a no-op.

    \b
    Example:
      curriculab ingest jobs/2026-10-01 tb-runs/ extra.jsonl
    """
    from curriculab.analysis.ingest import Identity, read_identities
    from curriculab.analysis.ingest import ingest as run_ingest

    try:
        identities = (read_identities(identities_file) if identities_file else []) + (
            [Identity(None, agent, model)] if agent or model else []
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    bar = _ProgressBar()
    with open_store(read_only=False) as store:
        try:
            report = run_ingest(
                store,
                paths,
                fmt,
                workers=workers,
                replace=replace,
                verify=verify,
                identities=identities,
                progress=None if as_json else bar.update,
            )
        finally:
            bar.stop()
    summary = {
        "units": report.units,
        "found": report.found,
        "inserted": report.inserted,
        "unchanged": report.unchanged,
        "replaced": report.replaced,
        "reread": report.reread,
        "skipped_unread": report.skipped,
        "gone": report.gone,
        "steps": report.steps,
        "tasks": report.tasks,
        "by_format": dict(report.by_format),
        "quarantined": report.quarantined,
        "warnings": len(report.warnings),
        "errors": [i.reason for i in report.errors],
    }
    if as_json:
        echo_json(summary)
    else:
        formats = ", ".join(f"{k} {v}" for k, v in sorted(report.by_format.items())) or "none"
        click.echo(
            f"Ingested {report.inserted} trajectories ({report.steps} steps; {formats}); "
            f"{report.unchanged} unchanged"
            + (
                f" ({report.skipped} of {report.units} inputs unchanged since a clean read, not read again)"
                if report.skipped
                else ""
            )
            + "; "
            + (f"{report.replaced} replaced; " if report.replaced else "")
            + (
                f"{report.reread} read again by the newer step reading (run `curriculab code`); "
                if report.reread
                else ""
            )
            + f"{report.tasks} task descriptions; "
            f"{report.quarantined} quarantined; {len(report.warnings)} warnings."
        )
        click.echo(
            f"{report.found} trials found: {report.inserted + report.replaced} ingested, {report.unchanged} unchanged, "
            f"{report.quarantined} refused."
        )
        if report.gone:
            click.echo(
                f"  {len(report.gone)} input(s) read before are gone (their trajectories stay in the store), "
                f"e.g. {safe_text(report.gone[0])}",
                err=True,
            )
        for issue in report.errors[:20]:
            click.echo(f"  quarantined: {issue.reason}", err=True)
        if report.quarantined > 20:
            click.echo(
                f'  ... and {report.quarantined - 20} more: curriculab query "select * from ingest_errors"', err=True
            )
    if report.quarantined:
        sys.exit(1)


@click.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--tasks", "n_tasks", default=36, show_default=True, help="Tasks to simulate.")
@click.option("--attempts", default=3, show_default=True, help="Attempts per model and task.")
@click.option("--seed", default=0, show_default=True)
def simulate(out: Path, n_tasks: int, attempts: int, seed: int) -> None:
    """Write a simulated Harbor/ATIF corpus with planted failures and its ground truth.

    \b
    Example:
      curriculab simulate sim/ --tasks 100 --attempts 5
    """
    from curriculab.analysis.simulate import simulate_corpus

    summary = simulate_corpus(out, n_tasks=n_tasks, attempts=attempts, seed=seed)
    click.echo(
        f"Wrote {summary.n_trajectories} trials over {summary.n_tasks} tasks for "
        f"{', '.join(summary.models)} to {out} (ground truth: {out / 'ground_truth.csv'})"
    )


class _ProgressBar:
    """Inputs read of inputs to read, on stderr. It appears with the first input read: a re-ingest
    with nothing new reads none, and never loads rich's progress display."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def update(self, done: int, total: int) -> None:
        if self._bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("ingest"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err_console(),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("ingest", total=total)
        self._bar.update(self._task, completed=done, total=total)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
