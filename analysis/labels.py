"""Human labels: import a CSV a person filled in, export a stratified sample for labelling,
and measure coder-vs-annotator agreement per code."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from curriculab.analysis import queries
from curriculab.analysis.issues import Issue, make_issue
from curriculab.analysis.stats import wilson_interval
from curriculab.analysis.store import Store
from curriculab.taxonomy.agreement import BinaryAgreement, binary_agreement, krippendorff_alpha_nominal
from curriculab.taxonomy.targets import planner_view
from curriculab.trajectory.errors import InputError
from curriculab.trajectory.vocabulary import POOLED_FAMILY

# The full taxonomy (pydantic) and the coders are imported where labels are read or written: `report`
# and `plan` reach this module for `planner_use` alone, which reads `planner_view`.

Row = dict[str, Any]
"""A row of a read (`queries.records`), by column."""

if TYPE_CHECKING:  # pandas only where a frame is made: the report and `plan` never need it
    import pandas as pd

_TRUE = {"1", "true", "yes", "y", "present", "t"}
_FALSE = {"0", "false", "no", "n", "absent", "f"}
_UNSURE = {"unsure", "?"}
DEFAULT_KAPPA_THRESHOLD = 0.6
MIN_LABELS_RELIABLE = 20
"""Labels (present or absent) a code needs before its kappa may make it reliable: a kappa from a
handful of labels swings with each new one."""


@dataclass
class LabelImport:
    """What a labels import did."""

    imported: int = 0
    """Labels written (replacing this annotator's earlier label for the same trajectory and code)."""
    skipped_blank: int = 0
    """Rows left blank in `present` (not yet labelled)."""
    errors: list[Issue] = field(default_factory=list)
    """Rows refused, each naming the line and the field."""


def import_labels(store: Store, path: Path | str, annotator: str, taxonomy_version: str | None = None) -> LabelImport:
    """Import `trajectory_id,code,present` rows; bad rows are refused one by one, good ones land.
    `present` "unsure" is stored as NULL: kept, and left out of agreement."""
    path = Path(path)
    from curriculab.taxonomy.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_version)
    result = LabelImport()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(make_issue(path, f"cannot read it ({exc})", "Save the labels as a UTF-8 CSV file"))
        return result
    reader = csv.DictReader(io.StringIO(text))
    missing = {"trajectory_id", "code", "present"} - set(reader.fieldnames or [])
    if missing:
        result.errors.append(
            make_issue(
                path, f"missing column(s) {sorted(missing)}", "The header must include trajectory_id,code,present"
            )
        )
        return result
    known = queries.trajectory_ids(store)
    rows: dict[tuple[str, str], bool | None] = {}
    for line, row in enumerate(reader, start=2):
        record = f"line {line}"
        value = (row.get("present") or "").strip().lower()
        if not value:
            result.skipped_blank += 1
            continue
        if row["code"] not in taxonomy.code_names:
            result.errors.append(
                make_issue(
                    path,
                    f"{row['code']!r} is not a {taxonomy.version} code",
                    f"Use one of: {', '.join(taxonomy.code_names)}",
                    record=record,
                    field="code",
                )
            )
        elif row["trajectory_id"] not in known:
            result.errors.append(
                make_issue(
                    path,
                    f"trajectory {row['trajectory_id']!r} is not in the store",
                    "Ingest it first, or fix the id",
                    record=record,
                    field="trajectory_id",
                )
            )
        elif value not in _TRUE | _FALSE | _UNSURE:
            result.errors.append(
                make_issue(
                    path,
                    f"present is {row['present']!r}",
                    "Write 1 or 0 (or true/false, yes/no), or unsure",
                    record=record,
                    field="present",
                )
            )
        else:
            rows[(row["trajectory_id"], row["code"])] = None if value in _UNSURE else value in _TRUE
    store.save_labels(annotator, taxonomy.version, rows)
    result.imported = len(rows)
    return result


def export_sample(
    store: Store, per_cell: int = 10, seed: int = 0, coder: str = "rules", taxonomy_version: str | None = None
) -> str:
    """A CSV to fill in: for every model × code, up to `per_cell` trajectories, half of them ones
    the coder flagged (so rare codes still get positives), `present` left blank."""
    from curriculab.taxonomy.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_version)
    rng = random.Random(seed)
    rows = list(queries.coded_for_labelling(store, coder, taxonomy.version).itertuples(index=False, name=None))
    cells: dict[tuple[str, str, bool], list[tuple[Any, ...]]] = {}
    for row in rows:
        cells.setdefault((row[1] or "", row[4], row[5]), []).append(row)
    chosen = []
    for (_model, _code, flagged), members in sorted(cells.items()):
        quota = per_cell // 2 if flagged else per_cell - per_cell // 2
        chosen.extend(rng.sample(members, min(quota, len(members))))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["trajectory_id", "code", "present", "model", "task_id", "outcome", "definition"])
    for trajectory_id, model, task_id, outcome, code, _ in sorted(chosen, key=lambda r: (r[4], r[1] or "", r[0])):
        writer.writerow([trajectory_id, code, "", model, task_id, outcome, taxonomy.get(code).definition])
    return out.getvalue()


@dataclass(frozen=True)
class CodeAgreement(BinaryAgreement):
    """Agreement of one coder with one annotator on one code (the coder's abstentions left out)."""

    code: str = ""
    """Taxonomy code."""
    alpha: float | None = None
    """Krippendorff's alpha among all annotators who labelled this code (3 or more), else None."""
    annotators: int = 0
    """Annotators with labels on this code."""
    in_sample: bool = False
    """The coder is a classifier trained on these very labels: the figures are in-sample (optimistic)."""
    reliable: bool = False
    """kappa ≥ threshold on at least MIN_LABELS_RELIABLE labels the coder did not learn from: the
    planner may use this code from this coder."""
    precision_low: float | None = None
    """Wilson 95% lower bound of precision (tp over tp + fp); None when the coder found it nowhere."""
    precision_high: float | None = None
    """Wilson 95% upper bound of precision."""
    recall_low: float | None = None
    """Wilson 95% lower bound of recall (tp over tp + fn); None when no label says present."""
    recall_high: float | None = None
    """Wilson 95% upper bound of recall."""
    abstained_on_present: int = 0
    """Trajectories the annotator labelled present on which the coder abstained (not_applicable):
    misses that agreement leaves out, counted here so they are not hidden."""
    coverage: float | None = None
    """Judged over labelled: the share of the annotator's labelled trajectories on which the coder
    said present or absent rather than abstaining (precision bought by abstaining shows here)."""
    family: str = POOLED_FAMILY
    """The format family measured (`format_family`), or '' for every format pooled."""


def agreement(
    store: Store,
    coder: str,
    annotator: str,
    threshold: float = DEFAULT_KAPPA_THRESHOLD,
    taxonomy_version: str | None = None,
    record: bool = True,
) -> list[CodeAgreement]:
    """Per code agreement of `coder` with `annotator`, pooled over every format and then per format
    family (a rule reads one agent's logs well and another's badly: only the family's own figure
    vouches for it); records reliability in `code_reliability`."""
    from curriculab.analysis.coding import IN_SAMPLE_PREFIX
    from curriculab.taxonomy.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_version)
    pairs = queries.coder_label_pairs(
        store, coder, annotator, taxonomy, in_sample_reason=f"{IN_SAMPLE_PREFIX} {annotator}"
    )
    if pairs.empty:
        raise InputError(
            f"no trajectory is both coded by {coder!r} and labelled by {annotator!r}. "
            f"Run `curriculab code --coder ...` and `curriculab labels import ... --annotator {annotator}` first"
        )
    family_of = dict(queries.trajectory_families(store)[["trajectory_id", "family"]].itertuples(index=False, name=None))
    all_labels = list(
        queries.labels_under(store, taxonomy)[["code", "trajectory_id", "annotator", "present"]].itertuples(
            index=False, name=None
        )
    )
    abstained = list(
        queries.abstained_on_labelled(store, coder, annotator, taxonomy)[
            ["trajectory_id", "code", "labelled"]
        ].itertuples(index=False, name=None)
    )
    judged = list(pairs.itertuples(index=False, name=None))
    families = sorted({family_of.get(t, POOLED_FAMILY) for t, *_ in judged})
    results = []
    for family in [POOLED_FAMILY, *families]:

        def ours(trajectory_id: str, family: str = family) -> bool:
            return family == POOLED_FAMILY or family_of.get(trajectory_id) == family

        for code in taxonomy.code_names:
            mine = [
                (bool(coded), bool(labelled), bool(inside))
                for t, k, coded, labelled, inside in judged
                if k == code and ours(t)
            ]
            if not mine:
                continue
            skipped = [bool(labelled) for t, k, labelled in abstained if k == code and ours(t)]
            units = {t for k, t, _, _ in all_labels if k == code and ours(t)}
            results.append(
                _code_agreement(
                    code,
                    family,
                    mine,
                    skipped,
                    [(t, who, present) for k, t, who, present in all_labels if k == code and t in units],
                    threshold,
                )
            )
    if record:
        store.save_reliability(
            coder,
            annotator,
            taxonomy.version,
            [(r.code, r.n, r.kappa, r.f1, threshold, r.reliable, r.in_sample, r.family) for r in results],
        )
    return results


def _code_agreement(
    code: str,
    family: str,
    judged: list[tuple[bool, bool, bool]],
    abstained: list[bool],
    every_label: list[tuple[str, str, bool]],
    threshold: float,
) -> CodeAgreement:
    """One code's agreement from its judged pairs (coded, labelled, in_sample), the labels of the
    pairs the coder abstained on, and every annotator's labels on these trajectories (for α)."""
    in_sample = any(inside for _, _, inside in judged)
    stats = binary_agreement([coded for coded, _, _ in judged], [labelled for _, labelled, _ in judged])
    found, present = stats.tp + stats.fp, stats.tp + stats.fn
    precision_ci = wilson_interval(stats.tp, found) if found else (None, None)
    recall_ci = wilson_interval(stats.tp, present) if present else (None, None)
    by_unit: dict[str, dict[str, bool]] = {}
    for trajectory_id, who, labelled in every_label:
        by_unit.setdefault(trajectory_id, {})[who] = labelled
    annotators = sorted({who for unit in by_unit.values() for who in unit})
    alpha = None
    if len(annotators) >= 3:
        alpha = krippendorff_alpha_nominal([[unit.get(a) for a in annotators] for unit in by_unit.values()])
    # agreement with the labels a classifier learned from proves nothing about new trajectories
    return CodeAgreement(
        **stats.as_dict(),
        code=code,
        family=family,
        alpha=alpha,
        annotators=len(annotators),
        in_sample=in_sample,
        precision_low=precision_ci[0],
        precision_high=precision_ci[1],
        recall_low=recall_ci[0],
        recall_high=recall_ci[1],
        abstained_on_present=sum(abstained),
        coverage=len(judged) / (len(judged) + len(abstained)),
        reliable=stats.kappa is not None
        and stats.kappa >= threshold
        and not in_sample
        and stats.n >= MIN_LABELS_RELIABLE,
    )


def label_and_measure(
    path: Path | str,
    *,
    annotator: str,
    trajectory_id: str,
    code: str,
    present: bool | None,
    coder: str,
    taxonomy_version: str | None = None,
) -> list[CodeAgreement]:
    """The labelling page's one write: store `annotator`'s label (None: unsure) in a short-lived
    writer, then recompute `coder`'s agreement with `annotator` in the same writer, so that
    `code_reliability` (what the planner reads) follows every label. Returns the new agreement
    (empty while nothing labelled is also coded). Open no reader on `path` while it runs."""
    annotator = annotator.strip()
    if not annotator:
        raise InputError("an annotator name is needed: labels are kept per annotator. Type your name first")
    from curriculab.taxonomy.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_version)
    if code not in taxonomy.code_names:
        raise InputError(f"{code!r} is not a {taxonomy.version} code. Use one of: {', '.join(taxonomy.code_names)}")
    with Store(path, create=False) as store:
        if trajectory_id not in queries.trajectory_ids(store):
            raise InputError(f"trajectory {trajectory_id!r} is not in {path}. Pick one from the queue")
        store.save_labels(annotator, taxonomy.version, {(trajectory_id, code): present})
        try:
            return agreement(store, coder, annotator, taxonomy_version=taxonomy.version)
        except ValueError:  # nothing both coded and labelled yet (an unsure label, or a code the coder skipped)
            return []


EXACT_METHODS = {
    "verifier": "the verifier's codes follow from the tests",
    "environment": "the environment's codes follow from the commands, exit codes and files it observed",
}
"""Reliability methods that are exact by construction, and why."""


class PlannerUse(NamedTuple):
    """What the planner does with one coder's code, and why: the one statement every page, the
    report and `plan` print."""

    used: bool
    """The planner acts on the code (reliable out of sample, or exact, and with a curriculum effect)."""
    method: str
    """How its reliability is known: labels, or an exact method (verifier, environment)."""
    why: str
    """The reason in a sentence."""
    status: str
    """The reason in a few words, for a table cell or a chart label."""
    reliable: bool
    """Its reliability alone (exact, or reliable against labels out of sample), whatever its target."""


def planner_use(
    rows: list[Row],
    mine: Row | None = None,
    *,
    code: str | None = None,
    taxonomy_version: str | None = None,
    family: str | None = None,
    timed_out: tuple[int, int] | None = None,
) -> PlannerUse:
    """The one rule of what the planner does with a code, read by the planner, the report and the
    Coders and Labelling pages: from every `code_reliability` row of one coder's code (none: never
    measured). A code is used when a row says it is reliable out of sample — exact by
    construction (method `verifier`/`environment`: labels then measure people against it, they do
    not gate it), or measured against an annotator's labels — and the taxonomy gives it a
    curriculum effect. `mine`, an annotator's own row, is the one the sentence speaks of where it
    decides. `code` and `taxonomy_version` default to the rows' own.

    `family`, the format family of the system planned for (`format_family`): only a measurement on
    that family's own trajectories vouches for the code there (a rule measured on Codex logs says
    nothing of Claude Code sessions); None reads the measurement pooled over every format.

    `timed_out`, (failures with the code that ran out of time, failures with the code) for the
    system planned for: where most ran out of time (`queries.TIME_BOUND`), a code that would move
    tiers is not read as difficulty — a test that failed because the agent's time ran out says the
    task was long, not too hard — whatever its reliability (the time rule)."""
    code = code or next((r["code"] for r in rows), None)
    version = taxonomy_version or next((r.get("taxonomy_version") for r in rows if r.get("taxonomy_version")), None)
    reliable, method, why, status = _reliability(_measured_for(rows, family), mine, family, rows)
    target = None
    if code is not None:
        taxonomy = planner_view(version)
        if code not in taxonomy.targets:
            return PlannerUse(
                False,
                method,
                f"not a {taxonomy.version} code: the planner cannot read it",
                "not used: unknown code",
                reliable,
            )
        target = taxonomy.targets[code]
        if target is None:
            return PlannerUse(
                False,
                method,
                f"no remediation target in taxonomy {taxonomy.version}: the planner leaves it out whatever its "
                f"reliability ({status})",
                "not used: no remediation target",
                reliable,
            )
        if not target.curriculum_effect:
            return PlannerUse(
                False,
                method,
                f"no curriculum effect: {target.note} (the planner leaves it out whatever its reliability: {status})",
                "not used: no curriculum effect",
                reliable,
            )
        timed, present = timed_out or (0, 0)
        if reliable and target.tiers and timed and timed >= queries.TIME_BOUND * present:
            return PlannerUse(
                False,
                method,
                f"not read as difficulty: {timed} of its {present} failures ran out of time (agent_timeout), so "
                f"they are about time and long tasks, not tasks too hard ({status}; the plan reads them as time)",
                f"not used: time ({timed} of {present} timed out)",
                reliable,
            )
    return PlannerUse(reliable, method, why, ("used: " if reliable else "not used: ") + status, reliable)


def _measured_for(rows: list[Row], family: str | None) -> list[Row]:
    """The rows that speak for `family` (None: pooled): exact ones everywhere, label ones only on
    their own family."""
    wanted = POOLED_FAMILY if family is None else family
    return [r for r in rows if r.get("method") in EXACT_METHODS or (r.get("family") or POOLED_FAMILY) == wanted]


def _reliability(
    rows: list[Row], mine: Row | None, family: str | None = None, every: Sequence[Row] = ()
) -> tuple[bool, str, str, str]:
    """(reliable, method, why, status) of one coder's code from its `code_reliability` rows for
    `family` (`every`: all its rows, to say where it was measured when `family` has none)."""
    if family is not None and not any(r.get("n") for r in rows) and any(r.get("n") for r in every):
        elsewhere = sorted({r.get("family") or "all formats pooled" for r in every if r.get("n")})
        return (
            False,
            "labels",
            f"no labels on {family} trajectories: measured only on {', '.join(elsewhere)}, which does not vouch for "
            f"{family}: label some of its trajectories",
            f"no labels on {family}",
        )
    mine = mine if mine is None or mine in rows else None
    usable = [r for r in rows if r.get("reliable") and not r.get("in_sample")]
    exact = [r for r in usable if r.get("method") in EXACT_METHODS]
    if exact:
        method = exact[0]["method"]
        yours = (
            ""
            if not mine or mine.get("kappa") is None or mine.get("method") in EXACT_METHODS
            else f"; your labels agree with it at κ = {mine['kappa']:.2f} on {int(mine['n'])}"
        )
        return (
            True,
            method,
            f"exact by construction ({EXACT_METHODS[method]}): the planner uses it whatever labels say{yours}",
            f"exact ({method})",
        )
    if usable:
        deciding = mine if mine in usable else usable[0]
        whose = "" if deciding is mine else f" ({deciding['annotator']}'s labels)"
        sentence, short = _reliability_words(deciding)
        on = f" on {family} trajectories" if family is not None else ""
        return True, "labels", sentence + on + whose, short
    # no annotator named: speak of the widest measure there is (no labels yet only when none exists)
    widest: Row | None = max(rows, key=lambda r: r.get("n") or 0, default=None)
    spoken = mine if mine is not None else widest
    whose = "" if spoken is None or spoken is mine or not spoken.get("n") else f" ({spoken['annotator']}'s labels)"
    sentence, short = _reliability_words(spoken)
    return False, "labels", sentence + whose, short


def planner_use_by_code(
    rows: list[Row],
    codes: Iterable[str] = (),
    taxonomy_version: str | None = None,
    families: Iterable[str] | None = None,
    timed_out: dict[str, tuple[int, int]] | None = None,
) -> dict[str, PlannerUse]:
    """`planner_use` for each code of `code_reliability` rows (one coder's, of one taxonomy
    version), and for each of `codes` with no rows (never measured); `families`, those of the
    system planned for (`planner_use_for_families`), None for the pooled measurement; `timed_out`,
    per code, the system's (timed out, present) failures for the time rule."""
    by_code: dict[str, list[Row]] = {code: [] for code in codes}
    for row in rows:
        by_code.setdefault(row["code"], []).append(row)
    version = taxonomy_version or next((r.get("taxonomy_version") for r in rows if r.get("taxonomy_version")), None)
    families = None if families is None else sorted(set(families))
    return {
        code: planner_use_for_families(
            measured, families, code=code, taxonomy_version=version, timed_out=(timed_out or {}).get(code)
        )
        for code, measured in by_code.items()
    }


def planner_use_for_families(
    rows: list[Row],
    families: Iterable[str] | None,
    *,
    code: str,
    taxonomy_version: str | None = None,
    timed_out: tuple[int, int] | None = None,
) -> PlannerUse:
    """`planner_use` for a system whose failures come from `families` (None: pooled): the code is
    used only where every family's own measurement vouches for it; the sentence names the family
    that decides (the first that refuses, or the measurements relied on). `timed_out`: the time
    rule's counts for the system (`planner_use`)."""
    if families is None:
        return planner_use(rows, code=code, taxonomy_version=taxonomy_version, timed_out=timed_out)
    uses = [
        (family, planner_use(rows, code=code, taxonomy_version=taxonomy_version, family=family, timed_out=timed_out))
        for family in sorted(set(families))
    ]
    if not uses:
        return planner_use(rows, code=code, taxonomy_version=taxonomy_version, timed_out=timed_out)
    if timed_out and all(u.status.startswith("not used: time") for _, u in uses):
        return uses[0][1]  # the time rule speaks of the system, not of one family
    refused = [(family, use) for family, use in uses if not use.used]
    family, use = refused[0] if refused else uses[0]
    if len(uses) == 1:
        return use
    if refused:
        return use._replace(why=f"{family}: {use.why}")
    return use._replace(why="; ".join(f"{f}: {u.why}" for f, u in uses))


def labels_to_reliable(row: Row | None, threshold: float = DEFAULT_KAPPA_THRESHOLD) -> str:
    """What a `code_reliability` row (None: no labels yet) means for planning, in a sentence."""
    return _reliability_words(row, threshold)[0]


def _reliability_words(row: Row | None, threshold: float = DEFAULT_KAPPA_THRESHOLD) -> tuple[str, str]:
    """(sentence, a few words) for what a `code_reliability` row means for planning."""
    if row is None or not row.get("n"):
        return "no labels yet: the planner cannot use this code", "no labels yet"
    n, kappa = int(row["n"]), row.get("kappa")
    if row.get("reliable"):
        return f"reliable (κ = {kappa:.2f} on {n} labels): the planner uses it", f"reliable (κ {kappa:.2f} on {n})"
    if row.get("in_sample"):
        return (
            "measured in sample (the classifier learned from these labels): the planner ignores it",
            "measured in sample",
        )
    if kappa is None or kappa != kappa:
        return (
            f"κ undefined on {n} labels (coder and labels never differ in kind yet): label some where the coder "
            "found the code and some where it did not",
            f"κ undefined on {n}",
        )
    if kappa < threshold:
        return (
            f"unreliable (κ = {kappa:.2f} < {threshold:.2f} on {n} labels): the planner ignores it",
            f"unreliable (κ {kappa:.2f} < {threshold:.2f} on {n})",
        )
    return (
        f"becomes reliable after {MIN_LABELS_RELIABLE - n} more labels if they agree as these do (κ = {kappa:.2f} on {n})",
        f"{n} of {MIN_LABELS_RELIABLE} labels (κ {kappa:.2f})",
    )


def system_planner_use(
    store: Store,
    coder: str,
    taxonomy_version: str | None,
    model: str,
    agent: str | None = None,
    codes: Iterable[str] = (),
) -> dict[str, PlannerUse]:
    """`planner_use` of every code of one coder for the system agent · model (`agent` None: the
    model's systems pooled, as `plan --model` reads them): the families of that system's failures
    and its own time counts. The one answer `plan`, the report and the pages print."""
    rows = queries.records_together(
        store,
        {
            "reliability": (queries.code_reliability, {"coder": coder, "taxonomy_version": taxonomy_version}),
            "formats": (queries.failure_formats, {"model": model}),
            "timeouts": (queries.code_timeouts, {"coder": coder, "model": model, "taxonomy_version": taxonomy_version}),
        },
    )
    codes = list(codes)
    unit = model if agent is None else queries.system_name(agent, model)
    per_unit = planner_use_per_system(
        rows["reliability"],
        rows["formats"],
        rows["timeouts"],
        codes,
        by="model" if agent is None else "system",
        agent=agent,
        taxonomy_version=taxonomy_version,
    )
    return per_unit.get(unit) or planner_use_by_code(rows["reliability"], codes, taxonomy_version, [])


def planner_use_per_system(
    reliability: list[Row],
    formats: list[Row],
    timeouts: list[Row],
    codes: Iterable[str] = (),
    *,
    by: str = "system",
    agent: str | None = None,
    taxonomy_version: str | None = None,
) -> dict[str, dict[str, PlannerUse]]:
    """Per system (`by="model"`: per model, its systems pooled) and code, `planner_use` from one
    coder's reads: `code_reliability` rows, `failure_formats` rows (whose families vouch) and
    `code_timeouts` rows (the time rule). Every unit with failures gets every code of `codes` and
    of `timeouts`. `agent` narrows `by="system"` to the named agent's systems."""
    key = "model" if by == "model" else "system"
    if agent is not None:
        formats = [r for r in formats if (r["agent"] or "(unknown)") == agent]
        timeouts = [r for r in timeouts if r["system"] == queries.system_name(agent, r["model"])]
    families = queries.format_families(formats, by=key)
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for r in timeouts:
        timed, present = counts.setdefault(r[key], {}).get(r["code"], (0, 0))
        counts[r[key]][r["code"]] = (timed + int(r["timed_out"]), present + int(r["present"]))
    wanted = list(codes)
    version = taxonomy_version or next(
        (r.get("taxonomy_version") for r in reliability if r.get("taxonomy_version")), None
    )
    return {
        unit: planner_use_by_code(
            reliability, [*wanted, *counts.get(unit, {})], version, families.get(unit, []), counts.get(unit, {})
        )
        for unit in sorted(set(families) | set(counts))
    }


def planner_uses_by_system(store: Store, model: str | None = None) -> pd.DataFrame:
    """What the planner does with every code found in each system's failures, per coder (its newest
    taxonomy version): `planner_use` for that system (its format families and its time), the table the
    Coders and Curriculum pages show. Columns: system, coder, taxonomy_version, code, timed_out,
    present, used, for_planning (a few words), why (the sentence `plan` prints)."""
    import pandas as pd

    out = []
    for coder in queries.coders_with_codes(store):
        version = queries.latest_taxonomy_version(store, coder)
        rows = queries.records_together(
            store,
            {
                "reliability": (queries.code_reliability, {"coder": coder, "taxonomy_version": version}),
                "formats": (queries.failure_formats, {"model": model}),
                "timeouts": (queries.code_timeouts, {"coder": coder, "model": model, "taxonomy_version": version}),
            },
        )
        counts = {(r["system"], r["code"]): (r["timed_out"], r["present"]) for r in rows["timeouts"]}
        uses = planner_use_per_system(rows["reliability"], rows["formats"], rows["timeouts"], taxonomy_version=version)
        out += [
            {
                "system": system,
                "coder": coder,
                "taxonomy_version": version,
                "code": code,
                "timed_out": counts[(system, code)][0],
                "present": counts[(system, code)][1],
                "used": use.used,
                "for_planning": use.status,
                "why": use.why,
            }
            for system, by_code in uses.items()
            for code, use in by_code.items()
            if (system, code) in counts
        ]
    columns = ["system", "coder", "taxonomy_version", "code", "timed_out", "present", "used", "for_planning", "why"]
    return pd.DataFrame(out, columns=columns)
