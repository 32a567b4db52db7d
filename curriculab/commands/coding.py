"""Failure codes and their reliability: `code`, `labels`, `classifier`, `agreement`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from curriculab.commands.common import CliError, db_option, echo_json, emit, open_store, output_options, taxonomy_option


@click.command()
@click.option(
    "--coder",
    type=click.Choice(["rules", "verifier", "classifier", "judge"]),
    default="rules",
    show_default=True,
    help="rules (behaviour, agent trials), verifier (test verdicts: completions and trials with per-test "
    "results; the newest taxonomy, exact), classifier, judge.",
)
@click.option(
    "--where", default=None, metavar="SQL", help="Only trajectories matching this condition on `trajectories`."
)
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier file from `curriculab classifier train` (with --coder classifier).",
)
@click.option(
    "--judge-url",
    envvar="CURRICULAB_JUDGE_URL",
    default=None,
    help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (with --coder judge).",
)
@click.option("--judge-model", envvar="CURRICULAB_JUDGE_MODEL", default=None, help="Model name the endpoint serves.")
@click.option(
    "--judge-retries",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Further attempts per trajectory after no answer (refused, timed out), a 429/5xx or an answer that is not "
    "JSON, waiting 1, 2, 4, ... s; 0 fails fast.",
)
@taxonomy_option("Taxonomy to code under (the rules, the judge; the verifier codes the newest).")
@click.option("--json", "as_json", is_flag=True, help="Print per-code counts as JSON.")
@db_option
def code(
    coder: str,
    where: str | None,
    model_path: Path | None,
    judge_url: str | None,
    judge_model: str | None,
    judge_retries: int,
    taxonomy_version: str,
    as_json: bool,
) -> None:
    """Assign taxonomy codes with evidence; coders abstain where evidence is missing.

    \b
    Example:
      curriculab code --coder rules --where "outcome = 'failed'"
      curriculab code --coder verifier
    """
    from curriculab.analysis import coding
    from curriculab.taxonomy.coders.judge import JudgeConfig

    with open_store(read_only=False, create=False) as store:
        if coder == "rules":
            report = coding.run_rule_coders(store, where, taxonomy_version=taxonomy_version)
        elif coder == "verifier":
            report = coding.run_verifier_coder(store, where)
        elif coder == "classifier":
            if model_path is None:
                raise CliError("--coder classifier needs --model PATH. Train one with `curriculab classifier train`")
            report = coding.run_classifier(store, model_path, where)
        else:
            if not (judge_url and judge_model):
                raise CliError(
                    "--coder judge needs --judge-url and --judge-model. Point them at an OpenAI-compatible server"
                )
            try:
                config = JudgeConfig(base_url=judge_url, model=judge_model, max_retries=judge_retries)
            except ValueError as exc:
                raise CliError(f"--judge-url: {exc}") from None  # what click cannot check
            report = coding.run_judge(store, judge_url, judge_model, where, config, taxonomy_version=taxonomy_version)
    failed = getattr(report, "failed", [])
    if failed:
        click.echo(
            f"{len(failed)} of {report.trajectories} trajectories got no usable answer from the judge; "
            f"they are left not_applicable. First: {failed[0]}",
            err=True,
        )
    rows = [
        (code, c.get("present", 0), c.get("absent", 0), c.get("not_applicable", 0))
        for code, c in sorted(report.counts.items())
    ]
    if as_json:
        echo_json(
            {
                "coder": report.coder,
                "taxonomy_version": report.taxonomy_version,
                "trajectories": report.trajectories,
                "counts": report.counts,
                "rejected": getattr(report, "rejected", []),
            }
        )
    else:
        emit(
            ["code", "present", "absent", "not_applicable"],
            rows,
            "table",
            title=f"{report.coder}: {report.trajectories} trajectories coded ({report.taxonomy_version})",
        )
    if failed and len(failed) == report.trajectories:
        raise CliError(
            f"the judge answered none of the {report.trajectories} trajectories. "
            f"Check --judge-url and --judge-model (is the server up and serving that model?)"
        )


def rounded(value: object) -> object:
    """A float to three places for a table; anything else as it is."""
    return round(value, 3) if isinstance(value, float) else value


@click.group()
def labels() -> None:
    """Import and export human labels."""


@labels.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--annotator", required=True, help="Who labelled (kept per label).")
@taxonomy_option("Taxonomy whose codes the CSV names.")
@db_option
def labels_import(file: Path, annotator: str, taxonomy_version: str) -> None:
    """Import a CSV with columns trajectory_id,code,present (1/0, true/false, yes/no).

    Blank `present` cells are skipped; bad rows are refused one by one (exit 1) and good ones land.

    \b
    Example:
      curriculab labels import alice.csv --annotator alice
    """
    from curriculab.analysis.labels import import_labels

    with open_store(read_only=False, create=False) as store:
        result = import_labels(store, file, annotator, taxonomy_version=taxonomy_version)
    click.echo(
        f"Imported {result.imported} labels by {annotator}; {result.skipped_blank} blank; {len(result.errors)} refused."
    )
    for issue in result.errors[:20]:
        click.echo(f"  refused: {issue.reason}", err=True)
    if result.errors:
        sys.exit(1)


@labels.command("export")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None, help="Write here instead of stdout.")
@click.option("--per-cell", default=10, show_default=True, help="Trajectories per model × code (half of them flagged).")
@click.option("--seed", default=0, show_default=True)
@click.option("--coder", default="rules", show_default=True, help="Coder whose flags stratify the sample.")
@taxonomy_option("Taxonomy whose codes (and the coder's codes under it) the sample asks about.")
@db_option
def labels_export(output: Path | None, per_cell: int, seed: int, coder: str, taxonomy_version: str) -> None:
    """Export a stratified sample to label: trajectory_id,code,present(blank),model,task_id,outcome,definition.

    \b
    Example:
      curriculab labels export -o to_label.csv --per-cell 20
    """
    from curriculab.analysis.labels import export_sample

    with open_store(read_only=True) as store:
        text = export_sample(store, per_cell=per_cell, seed=seed, coder=coder, taxonomy_version=taxonomy_version)
    if output:
        output.write_text(text)
        click.echo(f"Wrote {text.count(chr(10)) - 1} rows to {output}")
    else:
        click.echo(text, nl=False)


@click.group()
def classifier() -> None:
    """Train the learned coder from human labels."""


@classifier.command("train")
@click.option("--annotator", required=True, help="Whose labels to learn from.")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("classifier.joblib"), show_default=True)
@click.option("--folds", default=5, show_default=True, help="Cross-validation folds for the held-out agreement.")
@taxonomy_option("Taxonomy whose codes to learn; labels given under older versions are read through its mapping.")
@output_options()
@db_option
def classifier_train(annotator: str, output: Path, folds: int, taxonomy_version: str, fmt: str) -> None:
    """Train TF-IDF + structural features → calibrated logistic regression per code; print its
    agreement with the annotator on held-out folds; save it with its taxonomy version.

    \b
    Example:
      curriculab classifier train --annotator alice -o models/alice.joblib
      curriculab code --coder classifier --model models/alice.joblib
    """
    from curriculab.analysis.coding import train_classifier_from_labels

    with open_store(read_only=False, create=False) as store:
        model = train_classifier_from_labels(store, annotator, taxonomy_version=taxonomy_version, folds=folds)
    model.save(output)
    rows = [
        (code, m["n"], m["folds"], rounded(m["kappa"]), rounded(m["precision"]), rounded(m["recall"]), rounded(m["f1"]))
        for code, m in model.cv.items()
    ]
    rows += [(code, None, None, None, None, None, f"not learned: {why}") for code, why in model.skipped.items()]
    emit(
        ["code", "n", "folds", "kappa", "precision", "recall", "f1"],
        rows,
        fmt,
        title=f"{model.coder} held-out agreement with {annotator} -> {output}",
    )


@click.command("agreement")
@click.option("--coder", required=True, help="rules, classifier:<id>, judge:<model>.")
@click.option("--annotator", required=True)
@click.option("--threshold", default=0.6, show_default=True, help="Kappa below which a code is marked unreliable.")
@taxonomy_option("Taxonomy of the codes compared; labels given under older versions are read through its mapping.")
@output_options()
@db_option
def agreement(coder: str, annotator: str, threshold: float, taxonomy_version: str, fmt: str) -> None:
    """Per code, pooled over every format ("all formats") and then per format family (a one-agent
    format such as claude-code, or a many-agent one with its agent such as harbor/codex): n,
    prevalence, Cohen's kappa, precision, recall, F1 (and Krippendorff's alpha across 3+
    annotators), with the counts behind them (TP/FP/FN/TN), Wilson 95% intervals of precision and
    recall, the labelled presents on which the coder abstained (misses agreement leaves out) and
    coverage (judged over labelled). Codes under the threshold are marked unreliable in the store;
    the planner reads each system's own family.

    \b
    Example:
      curriculab agreement --coder rules --annotator alice --json
    """
    from curriculab.analysis.labels import agreement

    with open_store(read_only=False, create=False) as store:
        results = agreement(store, coder, annotator, threshold=threshold, taxonomy_version=taxonomy_version)
    columns = [
        "family",
        "code",
        "n",
        "tp",
        "fp",
        "fn",
        "tn",
        "abstained_on_present",
        "coverage",
        "prevalence",
        "kappa",
        "precision",
        "precision_low",
        "precision_high",
        "recall",
        "recall_low",
        "recall_high",
        "f1",
        "alpha",
        "annotators",
        "in_sample",
        "reliable",
    ]
    caveat = (
        (
            " — IN-SAMPLE: the classifier learned from these labels; its held-out figures are those "
            "`classifier train` printed, and in-sample codes are not marked reliable"
        )
        if any(r.in_sample for r in results)
        else ""
    )
    emit(
        columns,
        [
            tuple(rounded(getattr(r, c)) if c != "family" else (r.family or "all formats") for c in columns)
            for r in results
        ],
        fmt,
        title=f"{coder} vs {annotator} (kappa threshold {threshold}){caveat}",
    )
