"""What every command shares: the error a user can fix, `--db`, `--json/--csv/--table` (defined
once), printing rows, and opening the store the command names."""

from __future__ import annotations

import csv
import functools
import json
import math
import sys
from collections.abc import Callable, Collection
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from curriculab.tables import print_table

if TYPE_CHECKING:
    from rich.console import Console

    from curriculab.analysis.store import Store
    from curriculab.training.problems import Problem


@functools.cache
def out_console() -> Console:
    """The terminal for tables and the demo (rich loads on first use: JSON output never needs it)."""
    from rich.console import Console

    return Console()


@functools.cache
def err_console() -> Console:
    """The terminal for progress bars and notices."""
    from rich.console import Console

    return Console(stderr=True)


class CliError(click.ClickException):
    """An error a user can fix: printed as `Error: <cause>. <fix>`, exit 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {self.message}", err=True)


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--db` on every command; it overrides the group-level `--db` / `$CURRICULAB_DB`."""

    @click.option(
        "--db",
        "db_path",
        default=None,
        metavar="PATH",
        help="DuckDB file (default: $CURRICULAB_DB or ./curriculab.duckdb).",
    )
    @functools.wraps(func)
    def wrapper(*args: Any, db_path: str | None = None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        ctx.obj["db"] = db_path or ctx.obj["db"]
        return func(*args, **kwargs)

    return wrapper


def taxonomy_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--taxonomy VERSION`, the newest shipped version by default, on every command that makes or
    reads codes or labels (defined once, so they cannot drift apart)."""
    from curriculab.taxonomy.versions import NEWEST

    return click.option(
        "--taxonomy",
        "taxonomy_version",
        default=NEWEST,
        show_default=True,
        metavar="VERSION",
        help=f"{help} Older versions (v1 …) on request.",
    )


def output_options(default: str = "table") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--json / --csv / --table`, defined once for every command that reports rows."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        func = click.option(
            "--table", "fmt", flag_value="table", default=default == "table", help="Print a table (default)."
        )(func)
        func = click.option("--csv", "fmt", flag_value="csv", help="Print CSV with a header row.")(func)
        func = click.option(
            "--json",
            "fmt",
            flag_value="json",
            default=default == "json",
            help="Print a JSON array of objects, one per row, keyed by column name.",
        )(func)
        return func

    return decorate


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _for_people(value: Any) -> Any:
    """A table cell: a float to four significant digits (JSON and CSV keep every digit)."""
    value = _plain(value)
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.1f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return value


def emit(columns: list[str], rows: list[tuple[Any, ...]], fmt: str, title: str | None = None) -> None:
    """Print rows as a table (figures rounded for people), CSV or JSON array of objects (every digit)."""
    if fmt == "json":
        click.echo(
            json.dumps([{c: _plain(v) for c, v in zip(columns, row)} for row in rows], indent=2, ensure_ascii=False)
        )
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(
            [json.dumps(_plain(v)) if isinstance(v, (list, dict)) else _plain(v) for v in row] for row in rows
        )
    else:
        print_table(out_console(), title, columns, rows, render=_for_people)


def echo_json(value: Any) -> None:
    """Print `value` as indented JSON (dates and other values as text)."""
    click.echo(json.dumps(value, indent=2, default=str))


def db_path() -> str:
    """The store --db names (or $CURRICULAB_DB, or ./curriculab.duckdb)."""
    from curriculab.analysis.store import DEFAULT_DB  # the store (and DuckDB) load only where used

    return click.get_current_context().obj["db"] or DEFAULT_DB


def existing_store() -> Path:
    """The store --db names, which must be there already (StoreMissing says how to make one)."""
    from curriculab.analysis.store import require_store

    return Path(require_store(db_path()))


def open_store(read_only: bool, create: bool = True) -> Store:
    """The store named by --db; `create=False` for commands that must find one already there."""
    from curriculab.analysis.store import Store

    return Store(
        db_path(), read_only=read_only, create=create, on_wait=lambda notice: click.echo(f"waiting: {notice}", err=True)
    )


def load_problem_set(name: str, only: Collection[str] | None = None) -> list[Problem]:
    """A problems file, or a built-in set by name (builtin, humaneval); `only`: the ids that will be
    used (see `training.problems.load_problem_set`)."""
    from curriculab.training.problems import load_problem_set as load

    return load(name, only)  # a ProblemError is the user's to fix: the CLI prints it


def health_note(store: Store) -> str:
    """' N task(s) kept out …' where task health flags tasks a fit just left out, else ''."""
    from curriculab.analysis import queries

    flagged = queries.task_health.records(store, flagged_only=True)
    if not flagged:
        return ""
    return (
        f" {len(flagged)} task(s) kept out as never or always solved ({', '.join(r['task_id'] for r in flagged[:3])}"
        f"{', …' if len(flagged) > 3 else ''}): `curriculab tasks health --flagged` shows why."
    )
