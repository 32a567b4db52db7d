"""Analysis: `report` and `difficulty`."""

from __future__ import annotations

from pathlib import Path

import click

from curriculab.commands.common import CliError, db_option, emit, err_console, health_note, open_store, output_options


@click.command()
@click.option("--model", default=None, help="Report on one model only.")
@click.option("--md", "fmt", flag_value="md", default=True, help="Markdown (default).")
@click.option("--json", "fmt", flag_value="json", help="Everything as JSON.")
@click.option("--html", "fmt", flag_value="html", help="A standalone HTML page with charts (written to -o).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write here (default: stdout; report.html for --html).",
)
@click.option(
    "--coder",
    default="all",
    show_default=True,
    help="Whose failure codes to report: all (every coder with codes, side by side) or one coder's name.",
)
@click.option(
    "--band",
    nargs=2,
    type=float,
    default=(0.2, 0.8),
    show_default=True,
    help="Predicted pass-rate band that still carries training signal.",
)
@click.option(
    "--refit", is_flag=True, help="Refit measured difficulty first (writes); otherwise the report only reads."
)
@click.option(
    "--by",
    type=click.Choice(["system", "model"]),
    default=None,
    help="The unit the findings, tables and charts compare: system (agent · model) or model (each model's "
    "systems pooled) [default: system].",
)
@db_option
def report(
    model: str | None,
    fmt: str,
    output: Path | None,
    coder: str,
    band: tuple[float, float],
    refit: bool,
    by: str | None,
) -> None:
    """Failure distribution with intervals, bottlenecks, measured difficulty, signal, milestones.

    \b
    Example:
      curriculab report --html -o report.html
      curriculab report --model borealis-32b --json
    """
    from curriculab.analysis.report import build_report, to_html, to_markdown

    if not 0 <= band[0] < band[1] <= 1:
        raise CliError(f"--band {band[0]} {band[1]} is not a range inside [0, 1]. Pass two numbers like 0.2 0.8")
    if refit:
        from curriculab.analysis.difficulty import fit_store

        with open_store(read_only=False, create=False) as store:
            fit_store(store)
    with open_store(read_only=True) as store:
        data = build_report(store, model=model, coder=coder, band=band, by=by)
    if fmt == "html":
        target = output or Path("report.html")
        target.write_text(to_html(data))
        click.echo(f"Wrote {target}")
        return
    text = data.to_json() if fmt == "json" else to_markdown(data)
    if output:
        output.write_text(text)
        click.echo(f"Wrote {output}")
    else:
        click.echo(text)


@click.command()
@click.option("--models", "abilities", is_flag=True, help="Model abilities instead of task difficulties.")
@click.option("--kind", type=click.Choice(["2pl", "rasch"]), default="2pl", show_default=True)
@output_options(default="json")
@db_option
def difficulty(abilities: bool, kind: str, fmt: str) -> None:
    """Fit measured difficulty (IRT) on every attempt and export it: task_id, difficulty (b; higher is
    harder), discrimination, difficulty_se, n_attempts, pass_rate (with --models: model abilities).

    \b
    Example:
      curriculab difficulty --json > difficulty.json
    """
    from curriculab.analysis import queries
    from curriculab.analysis.difficulty import fit_store

    with open_store(read_only=False, create=False) as store:
        fit_store(store, kind=kind)
        if kept_out := health_note(store):
            err_console().print(kept_out.strip(), soft_wrap=True)
        frame = queries.model_abilities(store).drop(columns=["kind"]) if abilities else queries.fitted_tasks(store)
    rows = queries.records(frame)
    emit(list(frame.columns), [tuple(r.values()) for r in rows], fmt)
