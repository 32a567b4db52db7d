"""`compare`: two systems side by side, task by task."""

from __future__ import annotations

import click

from curriculab.commands.common import db_option, echo_json, emit, open_store


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--agent", default=None, help="A and B are models run by this one agent (the same agent, two models).")
@click.option("--model", default=None, help="A and B are agents running this one model (the same model, two agents).")
@click.option("--md", "fmt", flag_value="md", default=True, help="Markdown: every part (default).")
@click.option("--json", "fmt", flag_value="json", help="Every part as one JSON object.")
@click.option("--csv", "fmt", flag_value="csv", help="The task-level diff as CSV, one row per task.")
@click.option("--table", "fmt", flag_value="table", help="The task-level diff as a table.")
@db_option
def compare(a: str, b: str, agent: str | None, model: str | None, fmt: str) -> None:
    """Compare two systems (AGENT · MODEL): pass rates with Wilson intervals, the difference over the
    tasks both attempted with its interval, how failures ended and their codes, time against the
    tasks' limits, and every task: solved by A only, by B only, by both or by neither.

    A and B are systems as `curriculab report` names them, `AGENT · MODEL` (or `AGENT/MODEL`); with
    --agent they are two models, with --model two agents.

    \b
    Example:
      curriculab compare "terminus-2 · gpt-5" "codex · gpt-5"
      curriculab compare --model claude-sonnet-4 terminus-2 openhands --csv > tasks.csv
    """
    from curriculab.analysis.compare import compare as build
    from curriculab.analysis.compare import known_systems, resolve, to_markdown

    if agent and model:
        raise click.UsageError("give --agent or --model, not both")
    with open_store(read_only=True, create=False) as store:
        known = known_systems(store)
        first = resolve(store, a, agent=agent, model=model, known=known)
        second = resolve(store, b, agent=agent, model=model, known=known)
        comparison = build(store, first, second)
    if fmt == "json":
        echo_json(comparison.as_dict())
    elif fmt == "md":
        click.echo(to_markdown(comparison), nl=False)
    else:
        columns = list(comparison.tasks[0]) if comparison.tasks else ["task_id", "verdict"]
        emit(columns, [tuple(t[c] for c in columns) for t in comparison.tasks], fmt, title=f"A = {first}, B = {second}")
