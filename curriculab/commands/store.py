"""Reading and inspecting the store: `query` and `db schema|migrate`."""

from __future__ import annotations

import sys

import click

from curriculab.commands.common import db_option, db_path, echo_json, emit, open_store, output_options


@click.command()
@click.argument("sql")
@output_options()
@db_option
def query(sql: str, fmt: str) -> None:
    """Run one read-only SELECT against the store (`-` reads it from stdin). It reads the store
    and nothing else: no files, network, extensions or settings.

    \b
    Example:
      curriculab query "select model, count(*) from trajectories group by 1" --json
    """
    if sql == "-":
        sql = sys.stdin.read()
    from curriculab.analysis.store import Store

    with Store(db_path(), read_only=True, sealed=True) as store:
        columns, rows, _ = store.query_one_select(sql)
    emit(columns, rows, fmt)


@click.group()
def db() -> None:
    """Inspect or migrate the store's schema."""


@db.command("schema")
@click.option("--json", "as_json", is_flag=True, help="Print tables and columns as JSON.")
@db_option
def db_schema(as_json: bool) -> None:
    """List tables with their columns and types.

    \b
    Example:
      curriculab db schema --json
    """
    from curriculab.analysis.store import describe_tables

    with open_store(read_only=True) as store:
        tables = describe_tables(store)
    if as_json:
        echo_json(tables)
        return
    for table in tables:
        emit(
            ["column", "type"],
            [(c["name"], c["type"]) for c in table["columns"]],
            "table",
            title=f"{table['table']}: {table['description']}",
        )


@db.command("migrate")
@db_option
def db_migrate() -> None:
    """Apply pending schema migrations (creates the store if missing).

    \b
    Example:
      curriculab db migrate --db team.duckdb
    """
    from curriculab.analysis.store import Store, applied_migrations

    store = Store(db_path(), read_only=False)
    with store:
        rows = applied_migrations(store)
    click.echo(f"{store.path}: schema version {rows[-1][0]} ({len(rows)} migrations applied)")
