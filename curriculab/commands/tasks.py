"""Terminal tasks: `tasks import` (Harbor task directories into the store), `tasks check` (does
each run here, does its oracle score 1 and its do-nothing run 0), `tasks health` (tasks never or
always solved, flagged) and `tasks checked` (a person looked: put them back)."""

from __future__ import annotations

import dataclasses
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import click

from curriculab.commands.common import CliError, db_option, echo_json, emit, err_console, open_store, output_options
from curriculab.tables import safe_text


@click.group()
def tasks() -> None:
    """Terminal tasks (Harbor task directories): import them, check them, read their health."""


def _task_dirs(paths: tuple[str, ...]) -> list[Path]:
    """Each path, or `builtin` (the built-in suite), as the task directories under it, found by the
    rule training uses (`suite.task_directories`): what is checked is what trains."""
    from curriculab.training.terminal.suite import SuiteError, task_directories

    found: list[Path] = []
    for given in paths:
        if given != "builtin" and not Path(given).exists():
            raise click.UsageError(f"{given}: no such file or directory. Give task directories, or `builtin`")
        try:
            found += task_directories(given).values()
        except SuiteError as exc:
            raise click.UsageError(str(exc)) from None
    return found


@tasks.command("import")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--dataset",
    default=None,
    help="The benchmark dataset and version these folders are (NAME==VERSION, as a run names it): "
    "kept on each task, so runs of another version are told apart.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
def import_tasks(paths: tuple[str, ...], dataset: str | None, as_json: bool) -> None:
    """Store task directories (Harbor task.toml, Terminal-Bench task.yaml) in the `tasks` table:
    their category, authored difficulty, tags and time limits join every attempt at them, stored
    before or after (a leaderboard submission ships no task folders).

    PATHS are task directories, folders holding them, or `builtin`. A malformed task is refused
    with its file, field and fix (kept in `ingest_errors`, exit 1); its neighbours still land.
    Afterwards, runs whose tasks still have no metadata (or were imported at another version) are named.

    \b
    Example:
      curriculab tasks import builtin ~/suites/terminal-bench-2
      curriculab tasks import ~/.cache/terminal-bench/terminal-bench-core/0.1.1 --dataset terminal-bench-core==0.1.1
    """
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.task_metadata import coverage_notes, task_folder_ids
    from curriculab.training.terminal.suite import BUILTIN_SUITE

    roots = [str(BUILTIN_SUITE) if p == "builtin" else p for p in paths]
    with open_store(read_only=False) as store:
        report = ingest(store, roots, "tasks")
        marked = store.set_task_dataset(task_folder_ids(roots), dataset) if dataset else 0
        notes = coverage_notes(store)
    summary = {
        "tasks": report.tasks,
        "unchanged": report.skipped,
        "refused": report.quarantined,
        "errors": [issue.reason for issue in report.errors],
        "dataset": dataset,
        "marked": marked,
        "runs_without_metadata": notes,
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"{report.tasks} tasks stored; {report.skipped} unchanged; {report.quarantined} refused.")
        if dataset:
            click.echo(f"{marked} task(s) recorded as {dataset}.")
        for note in notes:
            click.echo(f"  {safe_text(note)}", err=True)
        for issue in report.errors:
            click.echo(f"  refused: {safe_text(issue.reason)}", err=True)
    if report.quarantined:
        sys.exit(1)


@tasks.command("check")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--command-timeout", type=float, default=30.0, show_default=True, help="Seconds one agent command may take."
)
@click.option(
    "--backend",
    type=click.Choice(["bwrap", "docker", "namespaces"]),
    default="bwrap",
    show_default=True,
    help="Run episodes under bubblewrap here, in containers (a local or DOCKER_HOST daemon), or in "
    "namespaces made without bubblewrap (root only).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Tasks checked at once (episodes wait mostly on the sandbox or the Docker daemon).",
)
@output_options()
def check(paths: tuple[str, ...], command_timeout: float, backend: str, jobs: int, fmt: str) -> None:
    """Whether each task runs here and on which backend (or why not), the oracle's and the
    do-nothing run's reward per milestone, and how long each took.

    A task whose oracle scores below 1 or whose do-nothing run scores above 0 is flagged (exit 1):
    its verifier cannot be trusted; so is a directory that cannot be read. A task that needs its
    image says what is missing (and does not fail the check).

    \b
    Example:
      curriculab tasks check builtin
      curriculab tasks check builtin --backend docker --jobs 4
    """
    from curriculab.training.terminal import EpisodeLimits, check_task

    try:
        limits = EpisodeLimits(command_timeout_s=command_timeout)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--command-timeout") from None
    directories = _task_dirs(paths)
    with _progress(len(directories), quiet=fmt != "table") as advance, ThreadPoolExecutor(jobs) as pool:
        pending = [pool.submit(check_task, directory, limits, backend) for directory in directories]
        for future in as_completed(pending):
            future.result()
            advance()
        results = [future.result() for future in pending]
    if fmt == "json":
        echo_json([dataclasses.asdict(r) | {"ok": r.ok} for r in results])
    else:
        rows = [
            (
                r.task_id,
                r.backend or "—",
                _milestones(r.oracle) if r.oracle else ("no oracle" if r.backend else "—"),
                _milestones(r.nop) if r.nop else "—",
                round(r.oracle.seconds, 2) if r.oracle else None,
                round(r.nop.seconds, 2) if r.nop else None,
                r.unreadable or "; ".join(r.flags or r.reasons) or "ok",
            )
            for r in results
        ]
        columns = ["task", "backend", "oracle", "do-nothing", "oracle_s", "nothing_s", "verdict"]
        emit(columns, rows, fmt, title=f"{len(results)} tasks checked")
        if fmt == "table":
            runs = sum(r.backend is not None for r in results)
            flagged = sum(bool(r.flags) for r in results)
            unreadable = sum(r.unreadable is not None for r in results)
            click.echo(
                f"{runs} of {len(results)} run here; {flagged} flagged; {unreadable} unreadable; "
                f"{len(results) - runs - unreadable} need their image."
            )
    if any(r.flags or r.unreadable for r in results):
        sys.exit(1)


@tasks.command("health")
@click.option("--flagged", is_flag=True, help="Only the flagged tasks (never or always solved, not yet checked).")
@output_options()
@db_option
def health(flagged: bool, fmt: str) -> None:
    """Whether each attempted task looks broken or trivial: one no system ever solved, or every system
    always solved (in 10 or more attempts by 3 or more systems), is flagged, with the evidence, and
    kept out of difficulty fits, capability evidence and `plan --tasks` mixes until checked.

    \b
    Example:
      curriculab tasks health --flagged
    """
    from curriculab.analysis import queries

    with open_store(read_only=True, create=False) as store:
        rows = queries.task_health.records(store, flagged_only=flagged)
    columns = list(rows[0]) if rows else ["task_id", "health", "flagged"]
    emit(columns, [tuple(r.values()) for r in rows], fmt, title="Task health")


@tasks.command("checked")
@click.argument("task_ids", nargs=-1, required=True)
@click.option("--note", default=None, help="What the check found (kept with the mark).")
@db_option
def checked(task_ids: tuple[str, ...], note: str | None) -> None:
    """Mark tasks checked after task health flagged them: they count again in difficulty fits,
    capability evidence and task mixes (refit with `curriculab difficulty`).

    \b
    Example:
      curriculab tasks checked nginx-request-logging --note "solvable: oracle passes"
    """
    from curriculab.analysis import queries

    with open_store(read_only=False, create=False) as store:
        known = {r["task_id"] for r in queries.task_health.records(store)}
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise CliError(
                f"no attempt of {', '.join(map(repr, unknown))} is in the store. "
                "`curriculab tasks health` lists the tasks it knows"
            )
        store.check_tasks(list(task_ids), note)
    click.echo(f"Marked {len(set(task_ids))} task(s) checked: they count in the next fit and plan.")


def _milestones(run) -> str:  # type: ignore[no-untyped-def]
    parts = ", ".join(f"{k}={v:g}" for k, v in run.milestones.items())
    return f"{run.reward:g} ({parts})" + (f" [{run.error}]" if run.error else "")


class _progress:
    """A bar on stderr while tasks are checked (none for --json/--csv)."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet = total, quiet

    def __enter__(self):  # type: ignore[no-untyped-def]
        if self.quiet:
            return lambda: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("checking tasks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err_console()
        )
        self.bar.start()
        job = self.bar.add_task("check", total=self.total)
        return lambda: self.bar.advance(job)

    def __exit__(self, *exc: object) -> None:
        if not self.quiet:
            self.bar.stop()
