"""`curriculab report`: where each model fails, how hard tasks really are, what still carries signal.

`build_report` only reads (through `analysis.queries`) and returns a `Report`; it works on a
store opened read-only. When the stored difficulty fit is older than the attempts, the report
says so rather than refitting (`curriculab difficulty` or `report --refit` refits).
`to_markdown` and `to_html` render a report; `Report.as_dict()` is the `--json` output. Harness
errors are reported apart and never counted as agent failures.
"""

from __future__ import annotations

import decimal
import html
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.difficulty import fit_systems, held_out_check
from curriculab.analysis.labels import planner_use_per_system
from curriculab.analysis.queries import COVERAGE_MIN
from curriculab.analysis.stats import cluster_bootstrap_difference, cluster_bootstraps, pass_at_k
from curriculab.analysis.store import Store
from curriculab.taxonomy.versions import NEWEST
from curriculab.trajectory.errors import InputError
from curriculab.trajectory.vocabulary import TASK_TIERS

Row = dict[str, Any]
"""One row of a read, or of a report table."""
Cells = dict[tuple[str, ...], dict[str, tuple[int, int]]]
"""{group key: {task_id: (successes, trials)}}, from per-task rows (`_cells_by`)."""
Section = tuple[str, list[Row], list[str] | None, str]
"""(title, rows, columns (None: every column), why it may be empty): one table of the report."""


@dataclass
class Report:
    """Everything the report says, as data (the `--json` output). Rows are plain dicts."""

    generated_at: str
    """UTC time the report was built."""
    model: str | None
    """The one model reported on, or None for all."""
    coder: str
    """Whose failure codes are reported."""
    taxonomy_version: str | None
    """Taxonomy those codes come from (the newest the coder used)."""
    coverage_min: float
    """Least share of failures a coder must judge before a top failure mode is stated."""
    band: list[float]
    """Predicted pass-rate band that still carries training signal."""
    overview: list[Row]
    """Pass rate per model with Wilson and task-clustered intervals, harness errors and flagged verdicts."""
    comparisons: list[Row]
    """Each model against the next one down: difference and its task-clustered interval."""
    by: str
    """The unit the findings, tables and charts compare: `system` (agent · model; the default) or
    `model` (each model's systems pooled, only when asked)."""
    system_comparisons: list[Row]
    """Each system against the next one down in the leaderboard's order, by its share of trials
    solved (every trial counts, as the leaderboard counts): difference and its task-clustered interval."""
    system_pass_at_k: list[Row]
    """Unbiased pass@k per system."""
    system_abilities: list[Row]
    """With `by="system"`: each system's IRT ability from a fit whose unit is the system (the stored
    fit's unit is the model), flagged tasks left out, and the share of its fitted tasks whose
    predicted pass rate lies in `band` (`difficulty.fit_systems`)."""
    system_failure_modes: list[Row]
    """With `by="system"`: each system's three largest codes from the leading coder, as shares of the
    failures it could judge."""
    top_failure_modes: dict[str, list[Row]]
    """Per model, its top codes by share of the failures the coder could judge."""
    coverage: list[Row]
    """Per model, failed attempts and how many the coder could judge."""
    bottlenecks: list[Row]
    """Codes at the top for every model."""
    failures_by_tier: list[Row]
    """Failure shares per authored tier."""
    cooccurrence: list[Row]
    """Pairs of codes in the same failed attempt, with lift."""
    difficulty: dict[str, Any]
    """calibration, authored_matches_measured, misplaced, held_out, abilities, fit (staleness)."""
    signal: list[Row]
    """Per model, share of tasks in the band and with mixed outcomes."""
    pass_at_k: list[Row]
    """Unbiased pass@k per model."""
    milestones: list[Row]
    """Where milestone-graded attempts stop."""
    harness_errors: list[Row]
    """Attempts that hit a harness fault, with or without a verdict."""
    unknown_models: list[Row]
    """Attempts that name no model and what they are reported as."""
    by_agent: list[Row]
    """Pass rates per agent and model."""
    evidence: list[Row]
    """Per model, attempts the coders could not see into."""
    quarantined: list[Row]
    """Inputs refused at ingest, per format."""
    training_runs: list[Row] = field(default_factory=list)
    """Per GRPO run: rollouts, pass rate, mean reward, steps, share of groups with no gradient."""
    rollout_codes: list[Row] = field(default_factory=list)
    """Per GRPO run and verifier code: share of its failed rollouts with the code, 95% CI."""
    systems: list[Row] = field(default_factory=list)
    """Per system (agent, agent version, model), in the leaderboard's order: pass rate over attempts with a verdict,
    and the leaderboard's figure (every error a failure, mean over runs)."""
    pooling: list[Row] = field(default_factory=list)
    """Per model row: the agents and runs it pools, and whether the source named the model."""
    endings: list[Row] = field(default_factory=list)
    """Per system: how its failures ended by the harness's record (out of time, another agent fault,
    at the tests' verdict), beside the tests' codes (`queries.failure_endings`)."""
    long_tasks: list[Row] = field(default_factory=list)
    """Per system, the tasks it ran out of time on most (`failure_endings` by task)."""
    task_health: list[Row] = field(default_factory=list)
    """Per task: attempts, systems, who solved it, harness faults, timeouts, health and whether it is
    flagged (never or always solved, unchecked: kept out of fits and mixes), `queries.task_health`."""
    solve_matrix: list[Row] = field(default_factory=list)
    """Per task, each system's passes/attempts (the system × task solve matrix, every model)."""
    beside: list[Row] = field(default_factory=list)
    """Every other coder with codes in the store, side by side with `coder` (not merged): per coder
    its coder, taxonomy_version, coverage, top_failure_modes, bottlenecks, cooccurrence, failures_by_tier."""
    system_signal: list[Row] = field(default_factory=list)
    """Per system: tasks with a verdict and the share with mixed outcomes (solved in some attempts, not all)."""
    findings: list[str] = field(default_factory=list)
    """The report's sentences."""

    def __getitem__(self, key: str) -> Any:  # reports read like the JSON they print: report["findings"]
        return getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """The report as `curriculab report --json` prints it (dates and other values as text). Its
        fields as they are, not `as_dict`'s deep copy: the rows are plain dicts and lists already, and
        copying them was a tenth of the command's time."""
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)}, indent=2, default=str)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else percent_text(x)


def percent_text(share: float) -> str:
    """`share` as a percentage with one decimal, half-up from its shortest decimal form (0.4925 →
    49.3%, 0.5875 → 58.8%, where binary `:.1%` gives 49.2% and 58.8%): the report and the pages alike."""
    return "n/a" if not math.isfinite(share) else f"{half_up(share, 1, scale=2)}%"


def _cells_by(rows: list[Row], keys: list[str], k: str, n: str) -> Cells:
    """{group key: {task_id: (successes, trials)}} from per-task rows."""
    cells: Cells = {}
    for row in rows:
        cells.setdefault(tuple(row[key] for key in keys), {})[row["task_id"]] = (row[k], row[n])
    return cells


def _lists(cells: dict[str, tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Per-task cells as (successes, trials) lists, in task order."""
    return [k for k, _ in cells.values()], [n for _, n in cells.values()]


def _set_intervals(rows: list[Row], groups: list[tuple[list[int], list[int]]]) -> None:
    """Each row's task-clustered interval (`cluster_low`, `cluster_high`) from its per-task
    (successes, trials) lists, all from the same resamples in one call."""
    for row, (low, high) in zip(rows, cluster_bootstraps(groups)):
        row["cluster_low"], row["cluster_high"] = low, high


CODERS = ("rules", "verifier", "judge", "classifier")
"""The coders a report reads by default (`coder="all"`), in this order, those with codes in the store."""


def _coder_reads(
    coder: str, version: str | None, model: str | None
) -> dict[str, tuple[queries.SqlRead[...], dict[str, Any]]]:
    """The reads one coder's failure sections need: `sections` holds most of them in one row
    (`failure_sections`; `_spread_sections` spreads them out)."""
    return {
        "reliability": (
            queries.code_reliability,
            {"coder": coder, "taxonomy_version": version, "computed_at": False},
        ),
        "sections": (queries.failure_sections, {"coder": coder, "model": model, "taxonomy_version": version}),
        "formats": (queries.failure_formats, {"model": model}),
    }


def _spread_sections(rows: dict[str, list[Row]], prefix: str = "") -> None:
    """`rows[prefix + "sections"]`'s one row as reads of their own (`rows[prefix + name]`)."""
    for name, read in rows.pop(f"{prefix}sections")[0].items():
        rows[f"{prefix}{name}"] = read or []  # an empty list aggregates to NULL


_VIEWED = ("reliability", "formats", "distribution", "share_clusters", "coverage", "pairs", "timeouts")
"""The reads `_coder_view` takes."""


def _coder_view(
    rows: dict[str, list[Row]],
    top: int,
    overview: Sequence[Row] = (),
    overview_groups: Sequence[tuple[list[int], list[int]]] = (),
) -> dict[str, Any]:
    """One coder's failure sections from its reads (`_coder_reads`); the overview's intervals are
    drawn from the same resamples when given."""
    # the planner's rule (`planner_use`), so the two never disagree: per model, its systems pooled
    # (families of every agent that ran it, time counts summed)
    in_sample = {r["code"] for r in rows["reliability"] if r["in_sample"]}
    measured = {r["code"] for r in rows["reliability"]}
    timed_out: Counter[tuple[str, str]] = Counter()
    for r in rows["timeouts"]:
        timed_out[(r["model"], r["code"])] += r["timed_out"]
    version = next((r["taxonomy_version"] for r in rows["distribution"]), None)
    uses = planner_use_per_system(
        rows["reliability"],
        rows["formats"],
        rows["timeouts"],
        {r["code"] for r in rows["distribution"]},
        by="model",
        taxonomy_version=version,
    )
    reliability = {
        (model, code): {
            "reliable": use.reliable,
            "in_sample": not use.reliable and code in in_sample,
            "for_planning": use.status,
        }
        for model, by_code in uses.items()
        for code, use in by_code.items()
    }
    by_dimension: dict[str, list[Row]] = {"overall": [], "tier": []}
    for row in rows["distribution"]:
        by_dimension[row["dimension"]].append(row)
    distribution = [r for r in by_dimension["overall"] if r["applied"]]
    share_clusters = {(r["model"], r["code"]): (r["present"], r["applied"]) for r in rows["share_clusters"]}
    for row in distribution:
        rel = reliability[(row["model"], row["code"])]
        row["reliable"] = rel["reliable"] if row["code"] in measured else None  # None: agreement never measured
        row["in_sample"] = rel["in_sample"]
        row["for_planning"] = rel["for_planning"]
        row["timed_out"] = timed_out.get((row["model"], row["code"]), 0)
    no_tasks: tuple[list[int], list[int]] = ([], [])
    _set_intervals(
        list(overview) + distribution,
        list(overview_groups) + [share_clusters.get((r["model"], r["code"]), no_tasks) for r in distribution],
    )
    by_model: dict[str, list[Row]] = {}
    for row in distribution:
        if row["n"]:
            by_model.setdefault(row["model"], []).append(row)
    top_modes = {m: ranked[:top] for m, ranked in by_model.items()}
    return {
        "coverage": rows["coverage"],
        "top_failure_modes": top_modes,
        "bottlenecks": _bottlenecks(top_modes),
        "failures_by_tier": [
            {
                "model": r["model"],
                "tier": r["value"],
                **{k: r[k] for k in ("code", "n", "applied", "failures", "share", "coverage", "ci_low", "ci_high")},
            }
            for r in by_dimension["tier"]
            if r["n"]
        ],
        "cooccurrence": [{"codes": [r["code_a"], r["code_b"]], "n": r["n"], "lift": r["lift"]} for r in rows["pairs"]],
    }


def build_report(
    store: Store,
    model: str | None = None,
    coder: str = "all",
    band: tuple[float, float] = (0.2, 0.8),
    top: int = 5,
    by: str | None = None,
) -> Report:
    """Everything the report says. Reads only: works on `Store(path, read_only=True)`. `coder="all"`
    reports every coder with codes in the store side by side (the first in `CODERS` order leads;
    the others are `beside`); a coder's name reports that one alone. `by` is the unit the findings
    compare: `system` (agent · model; None chooses it) or `model` (each model's systems pooled)."""
    versions: dict[str, str | None] = {}
    found: set[str] = set()
    if coder == "all":
        versions = {c: queries.latest_taxonomy_version(store, c) for c in CODERS}
        present = [c for c in CODERS if versions[c] is not None]
        # the lead is the first coder that found something: one that abstained everywhere (rules on
        # installed agents' verdicts) would leave the top-level failure modes empty
        found = set(queries.coders_with_codes(store))
        present.sort(key=lambda c: c not in found)
        coder, others = (present[0], present[1:]) if present else ("rules", [])
    else:
        others = []
    version = versions[coder] if coder in versions else queries.latest_taxonomy_version(store, coder)
    # every read in one batch, side by side: the lead coder's, the other coders' (named `coder/read`),
    # each system's failure modes (where the lead coder coded) and the rest
    beside_reads = {other: _coder_reads(other, versions[other], model) for other in others}
    rows = queries.records_together(
        store,
        {
            **{
                f"{other}/{name}": read
                for other, reads in beside_reads.items()
                # a coder that found no code (other than harness_failure, which no failure section
                # shows) has nothing in its failure sections whatever they read: its coverage says why
                for name, read in (
                    reads.items() if other in found else [("coverage", (queries.coder_coverage, reads["sections"][1]))]
                )
            },
            "overview": (queries.pass_rates, {"model": model}),
            "task_cells": (queries.task_cells, {"model": model}),
            **_coder_reads(coder, version, model),
            "held_out": (queries.stored_held_out, {}),
            "calibration": (queries.tier_calibration, {}),
            "misplaced": (queries.misplaced_tasks, {}),
            "abilities": (queries.model_abilities, {"model": model}),
            "signal": (queries.signal_efficiency, {"band": band, "model": model}),
            "milestones": (queries.milestone_funnel, {"model": model}),
            "harness_errors": (queries.harness_errors, {"model": model}),
            "endings": (queries.failure_endings, {"model": model}),
            "task_health": (queries.task_health, {}),
            "solve_matrix": (queries.solve_matrix, {"model": model}),
            "task_endings": (queries.failure_endings, {"model": model, "by": "task"}),
            "unknown_models": (queries.unknown_models, {"model": model}),
            "evidence": (queries.attempt_evidence, {"model": model}),
            "quarantined": (queries.quarantined_inputs, {}),
            "training_runs": (queries.training_runs, {}),
            "rollout_codes": (queries.rollout_codes, {}),
            "systems": (queries.systems, {"model": model}),
            "pooling": (queries.model_pooling, {"model": model}),
        },
    )
    _spread_sections(rows)
    for other in others:
        if other in found:
            _spread_sections(rows, f"{other}/")
    overview = rows["overview"]
    if not overview:
        raise InputError(
            f"no attempts{' for model ' + repr(model) if model else ''} in the store. "
            "Ingest trajectories first, or check the model name with "
            '`curriculab query "select distinct model from trajectories"`'
        )
    overview.sort(key=lambda r: (r["pass_rate"] is None, -(r["pass_rate"] or 0), r["model"]))
    pass_cells = _cells_by(rows["task_cells"], ["model"], "passes", "attempts")
    comparisons = _comparisons(overview, pass_cells)
    by = by or "system"  # systems are the unit; models are pooled only when asked
    if by not in ("system", "model"):
        raise InputError(f"a report compares by 'system' or 'model', not {by!r}")
    # systems compared as the leaderboard counts them: every trial, an infrastructure fault a failure
    system_cells = _cells_by(rows["solve_matrix"], ["system"], "passes", "trials")
    leaderboard_order = dict.fromkeys(f"{r['agent']} · {r['model']}" for r in rows["systems"])
    trials = {name: sum(n for _, n in system_cells.get((name,), {}).values()) for name in leaderboard_order}
    system_rates = [
        {"model": name, "pass_rate": sum(k for k, _ in system_cells[(name,)].values()) / trials[name]}
        for name in leaderboard_order
        if trials[name]
    ]
    system_comparisons = [
        {"higher_system": c.pop("higher"), "lower_system": c.pop("lower"), **c}
        for c in _comparisons(system_rates, system_cells)
    ]
    # every trial counts, as in the leaderboard's accuracy: every system then has the same tasks' attempts
    system_pass_at_k = _pass_at_k(system_cells, "system", "every trial (an error a failure), as the leaderboard counts")
    flagged_tasks = {t["task_id"] for t in rows["task_health"] if t["flagged"]}
    abilities_by_system = fit_systems(rows["solve_matrix"], flagged_tasks, band).abilities if by == "system" else []
    system_modes = []
    if version is not None:
        coded = [
            r
            for r in rows["system_distribution"]
            if r["code"] != "harness_failure" and r["n"] and r["share"] is not None
        ]
        # each system's codes as the planner reads them for that system (`planner_use`: its families, its time)
        uses = planner_use_per_system(
            rows["reliability"], rows["formats"], rows["timeouts"], {r["code"] for r in coded}, taxonomy_version=version
        )
        timed = {(r["system"], r["code"]): r["timed_out"] for r in rows["timeouts"]}
        measured = {r["code"] for r in rows["reliability"]}
        in_sample = {r["code"] for r in rows["reliability"] if r["in_sample"]}
        for r in coded:
            use = uses[r["system"]][r["code"]]
            r["timed_out"] = timed.get((r["system"], r["code"]), 0)
            r["reliable"] = use.reliable if r["code"] in measured else None
            r["in_sample"] = not use.reliable and r["code"] in in_sample
            r["for_planning"] = use.status
        fields = (
            "system",
            "code",
            "n",
            "timed_out",
            "applied",
            "failures",
            "share",
            "coverage",
            "ci_low",
            "ci_high",
            "reliable",
            "in_sample",
            "for_planning",
        )
        system_modes = _first_per(coded, 3, fields)  # the read is ordered by system, share first
        clusters = {(r["system"], r["code"]): (r["present"], r["applied"]) for r in rows["system_clusters"]}
        _set_intervals(system_modes, [clusters.get((r["system"], r["code"]), ([], [])) for r in system_modes])
    view = _coder_view(rows, top, overview, [_lists(pass_cells.get((r["model"],), {})) for r in overview])
    beside = [
        {
            "coder": other,
            "taxonomy_version": versions[other],
            **_coder_view({name: rows.get(f"{other}/{name}", []) for name in _VIEWED}, top),
        }
        for other in beside_reads
    ]

    fit = queries.fit_staleness(store)
    stored = rows["held_out"] if fit["fitted"] == fit["current"] else []
    try:  # a stale fit's stored check would describe other attempts: check the current ones
        held = (
            {**stored[0], "computed": "with the stored fit"}
            if stored
            else {**held_out_check(store).__dict__, "computed": "now, for this report: no current fit is stored"}
        )
    except ValueError as exc:
        held = {"error": str(exc)}
    calibration = rows["calibration"]
    report = Report(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        model=model,
        coder=coder,
        taxonomy_version=version,
        coverage_min=COVERAGE_MIN,
        band=list(band),
        overview=overview,
        comparisons=comparisons,
        by=by,
        system_comparisons=system_comparisons,
        system_pass_at_k=system_pass_at_k,
        system_failure_modes=system_modes,
        system_abilities=abilities_by_system,
        **view,
        difficulty={
            "fit": {**fit, "current_fit": fit["fitted"] == fit["current"] and fit["fitted"] > 0},
            "calibration": calibration,
            "authored_matches_measured": (
                sum(c["tasks"] for c in calibration if c["tier_authored"] == c["measured_tier"])
                / sum(c["tasks"] for c in calibration)
            )
            if calibration
            else None,
            "misplaced": rows["misplaced"],
            "held_out": held,
            "abilities": rows["abilities"],
        },
        signal=rows["signal"],
        pass_at_k=_pass_at_k(pass_cells),
        milestones=rows["milestones"],
        harness_errors=rows["harness_errors"],
        endings=rows["endings"],
        task_health=rows["task_health"],
        solve_matrix=_wide_matrix(rows["solve_matrix"]),
        long_tasks=_long_tasks(rows["task_endings"]),
        unknown_models=rows["unknown_models"],
        by_agent=_by_agent(rows["systems"]),
        evidence=rows["evidence"],
        quarantined=rows["quarantined"],
        training_runs=rows["training_runs"],
        rollout_codes=rows["rollout_codes"],
        systems=rows["systems"],
        pooling=rows["pooling"],
        beside=beside,
        system_signal=_system_signal(rows["solve_matrix"]),
    )
    report.findings = _findings(report)
    return report


def _system_signal(rows: list[Row]) -> list[Row]:
    """Per system, from the solve matrix: tasks with a verdict and the share solved in some attempts, not all."""
    tasks: Counter[str] = Counter()
    mixed: Counter[str] = Counter()
    for r in rows:
        if r["attempts"]:
            tasks[r["system"]] += 1
            mixed[r["system"]] += 0 < r["passes"] < r["attempts"]
    return [
        {"system": system, "tasks": n, "mixed": mixed[system], "share_mixed": mixed[system] / n}
        for system, n in sorted(tasks.items())
    ]


def _wide_matrix(rows: list[Row]) -> list[Row]:
    """`solve_matrix` rows as one row per task with a `passes/attempts` cell per system."""
    systems = sorted({r["system"] for r in rows})
    by_task: dict[str, dict[str, Any]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], {"task_id": r["task_id"], **dict.fromkeys(systems, "")})[r["system"]] = (
            f"{r['passes']}/{r['attempts']}"
        )
    return [by_task[t] for t in sorted(by_task)]


def _long_tasks(rows: list[Row], per_system: int = 5) -> list[Row]:
    """Per system, the tasks it ran out of time on most (at least once), most first."""
    timed = sorted((r for r in rows if r["timed_out"]), key=lambda r: (r["system"], -r["timed_out"], r["task_id"]))
    return _first_per(
        timed, per_system, ("system", "task_id", "attempts", "failures", "timed_out", "crashed", "to_verdict")
    )


def _first_per(rows: list[Row], limit: int, fields: tuple[str, ...]) -> list[Row]:
    """The first `limit` rows of each system (rows in their order), with `fields` only."""
    taken: Counter[str] = Counter()
    out = []
    for row in rows:
        taken[row["system"]] += 1
        if taken[row["system"]] <= limit:
            out.append({k: row[k] for k in fields})
    return out


def _by_agent(systems: list[Row]) -> list[Row]:
    """Pass rates per agent and model (every version of the agent together), from the systems rows."""
    totals: dict[tuple[str, str], list[int]] = {}
    for row in systems:
        sums = totals.setdefault((row["agent"], row["model"]), [0, 0])
        sums[0] += row["attempts"]
        sums[1] += row["passes"]
    return [
        {"agent": agent, "model": model, "attempts": n, "passes": k, "pass_rate": k / n if n else None}
        for (agent, model), (n, k) in sorted(totals.items())
    ]


def _comparisons(overview: list[Row], cells: Cells) -> list[Row]:
    """Each model against the next one down the ranking: the task-clustered interval of the difference."""
    ranked = [r for r in overview if r["pass_rate"] is not None]
    out = []
    for a, b in zip(ranked, ranked[1:]):
        tasks = sorted(set(cells.get((a["model"],), {})) | set(cells.get((b["model"],), {})))
        ca, cb = cells.get((a["model"],), {}), cells.get((b["model"],), {})
        low, high = cluster_bootstrap_difference(
            [ca.get(t, (0, 0))[0] for t in tasks],
            [ca.get(t, (0, 0))[1] for t in tasks],
            [cb.get(t, (0, 0))[0] for t in tasks],
            [cb.get(t, (0, 0))[1] for t in tasks],
        )
        # the interval comes whole or not at all (too few tasks)
        distinguishable = low is not None and high is not None and (low > 0 or high < 0)
        out.append(
            {
                "higher": a["model"],
                "lower": b["model"],
                "difference": a["pass_rate"] - b["pass_rate"],
                "ci_low": low,
                "ci_high": high,
                "distinguishable": distinguishable,
            }
        )
    return out


def _bottlenecks(top_modes: dict[str, list[Row]]) -> list[Row]:
    """Codes that rank first (or within the top two) for every model with coded failures."""
    models = [m for m in top_modes if top_modes[m]]
    if len(models) < 2:
        return []
    for depth in (1, 2):
        common = set.intersection(*({r["code"] for r in top_modes[m][:depth]} for m in models))
        if common:
            return [
                {
                    "code": c,
                    "within_top": depth,
                    "shares": {m: next(r["share"] for r in top_modes[m] if r["code"] == c) for m in models},
                    "usable": all(_unusable(next(r for r in top_modes[m] if r["code"] == c)) == [] for m in models),
                }
                for c in sorted(common)
            ]
    return []


def _unusable(row: dict[str, Any]) -> list[str]:
    """Why a failure share may not be stated as a finding (empty when it may)."""
    problems = []
    if row["coverage"] < COVERAGE_MIN:
        problems.append(
            f"the coder could judge only {row['applied']} of {row['failures']} failures "
            f"({_pct(row['coverage'])}; {_pct(COVERAGE_MIN)} needed)"
        )
    if row["in_sample"]:
        problems.append("its agreement with people was measured in-sample (a classifier on its own training labels)")
    elif row["reliable"] is None:
        problems.append("the coder's agreement with people on this code is not measured (`curriculab agreement`)")
    elif not row["reliable"]:
        problems.append("the coder's agreement with people on this code is below threshold")
    return problems


def _pass_at_k(pass_cells: Cells, unit: str = "model", counted: str = "attempts with a verdict") -> list[Row]:
    """Unbiased pass@k per `unit` from its per-task (passes, attempts) cells (`_cells_by`), over the
    SAME tasks for every unit: k is 1 and the usual number of attempts per task, and pass@k averages
    the tasks where every unit has at least k (`tasks@k`); each unit's tasks with fewer than k
    (never attempted included) are counted (`short@k`) and named (`short_tasks@k`), never dropped
    silently. `counted` says which attempts count (every trial, or those with a verdict)."""
    per = {key[0]: {t: (c, n) for t, (c, n) in tasks.items()} for key, tasks in pass_cells.items()}
    per = {u: cells for u, cells in per.items() if any(n for _, n in cells.values())}
    if not per:
        return []
    every_task = sorted({t for cells in per.values() for t in cells})
    sizes = [n for cells in per.values() for _, n in cells.values() if n]
    usual = max(set(sizes), key=sizes.count)
    common = {k: [t for t in every_task if all(per[u].get(t, (0, 0))[1] >= k for u in per)] for k in sorted({1, usual})}
    out = []
    for u in sorted(per, key=str):
        cells = per[u]
        entry: dict[str, Any] = {unit: u, "counted": counted, "tasks": sum(1 for _, n in cells.values() if n)}
        for k, tasks in common.items():
            entry[f"pass@{k}"] = (
                sum(pass_at_k(cells[t][1], cells[t][0], k) for t in tasks) / len(tasks) if tasks else None
            )
            entry[f"tasks@{k}"] = len(tasks)
            short = [t for t in every_task if cells.get(t, (0, 0))[1] < k]
            entry[f"short@{k}"] = len(short)
            entry[f"short_tasks@{k}"] = ", ".join(short[:5]) + (", …" if len(short) > 5 else "")
        out.append(entry)
    return out


def _coder_findings(view: dict[str, Any], rates: list[Row], label: str, modes_too: bool = True) -> list[str]:
    """One coder's sentences: what it could judge, its top failure mode per model and bottlenecks
    (`modes_too`; False where the systems' own failure modes are stated instead)."""
    found: list[str] = []
    for cov in view["coverage"]:
        m = cov["model"]
        modes = view["top_failure_modes"].get(m) or []
        if not cov["failures"]:
            continue
        if not cov["coded_failures"]:
            found.append(
                label + f"{m}: none of its {cov['failures']} failed attempts could be coded by `{view['coder']}` "
                f"({cov['why_not_coded']})."
            )
            continue
        if not modes_too:
            continue
        if not modes:
            found.append(
                label + f"{m}: no failure code found in its {cov['failures']} failed attempts "
                f"(the coder could judge {cov['coded_failures']} of them)."
            )
            continue
        t = modes[0]
        problems = _unusable(t)
        if problems:
            found.append(
                label
                + f"{m}: no top failure mode stated — {t['code']} leads ({t['n']} of {t['applied']} judged failures) "
                f"but {'; and '.join(problems)}."
            )
        else:
            timed = (
                f" {t['timed_out']} of those {t['n']} ran out of time (agent_timeout): read them as time, not as "
                "work the tests found wrong."
                if t.get("timed_out") and t["timed_out"] >= queries.TIME_BOUND * t["n"]
                else ""
            )
            found.append(
                label
                + f"{m}: the top failure mode is {t['code']}, in {_pct(t['share'])} of the failures the coder could "
                f"judge ({t['n']} of {t['applied']}; 95% CI over tasks {_pct(t['cluster_low'])}–{_pct(t['cluster_high'])}; "
                f"coverage {_pct(t['coverage'])} of {t['failures']} failures).{timed}"
            )
    for b in view["bottlenecks"] if modes_too else []:
        where = "the top failure mode" if b["within_top"] == 1 else "in the top two failure modes"
        gap = (rates[0]["pass_rate"] - rates[-1]["pass_rate"]) * 100 if len(rates) > 1 else 0
        if b["usable"]:
            found.append(
                label
                + f"Bottleneck: {b['code']} is {where} for every model despite a {gap:.0f}-point gap in pass rate."
            )
        else:
            found.append(
                label + f"{b['code']} is {where} for every model, but not stated as a bottleneck: for some model its "
                f"coverage or coder agreement is not enough (see above)."
            )
    return found


def _findings(r: Report) -> list[str]:
    found = []
    for view in [{"coder": r.coder, "taxonomy_version": r.taxonomy_version}, *r["beside"]]:
        if view["taxonomy_version"] and view["taxonomy_version"] != NEWEST:
            found.append(
                f"`{view['coder']}` coded this store under taxonomy {view['taxonomy_version']}, not the newest "
                f"({NEWEST}); its codes are shown as coded. `curriculab code --coder {view['coder']}` recodes "
                f"under {NEWEST}."
            )
    fit = r["difficulty"]["fit"]
    if not fit["current_fit"] and not fit["fitted"]:
        found.append(
            "No difficulty fit is stored: the sections below show no fitted difficulty, tiers or signal. "
            "Fit one with `curriculab difficulty` or `curriculab report --refit`."
        )
    elif not fit["current_fit"]:
        found.append(
            f"The stored difficulty fit is stale (it used {fit['fitted']} attempts; the store has "
            f"{fit['current']}): difficulty, tiers and signal below are from it. Refit with `curriculab "
            f"difficulty` or `curriculab report --refit`."
        )
    for concern in filter(None, map(queries.pooling_concern, r["pooling"])):
        pooled, kind = concern
        found.append(
            f"{pooled}: its row mixes systems; compare them under Systems (agent × model)."
            if kind == "agents"
            else f"{pooled}: they may be different models. Name them (`curriculab ingest --model`, `--identities`)."
        )
    rates = [o for o in r["overview"] if o["pass_rate"] is not None]
    for o in r["overview"]:
        if o["pass_rate"] is None:
            found.append(
                f"{o['model']}: every attempt ({o['harness_errors']}) ended in a harness error; it has no pass rate."
            )
    ended = [e for e in r["endings"] if e["failures"]]
    if ended:
        failures, timed = sum(e["failures"] for e in ended), sum(e["timed_out"] for e in ended)
        found.append(
            f"Time: {timed} of the {failures} failures ({_pct(timed / failures)}) ran out of time (agent_timeout), "
            f"over {len(ended)} system(s); per system under 'How failures ended' and in each system's failure "
            "modes (`timed_out`)."
        )
    if r["by"] == "system":
        ranked = [x for x in r["systems"] if x["pass_rate"] is not None]
        if len(ranked) > 1:
            best, worst = ranked[0], ranked[-1]
            found.append(
                "Systems (agent · model) are the unit here: a model's row would mix the agents that ran it "
                "(`--by model` pools them). "
                f"In the leaderboard's order {best['agent']} · {best['model']} leads at leaderboard accuracy "
                f"{_pct(best['leaderboard_accuracy'])} ({_spread_text(best)}) and {worst['agent']} · "
                f"{worst['model']} trails at {_pct(worst['leaderboard_accuracy'])} ({_spread_text(worst)}); every "
                "trial counts there, an error as a failure."
            )
        comparisons = [(c["higher_system"], c["lower_system"], c) for c in r["system_comparisons"]]
        measure = " in solved trials"
    else:
        if len(rates) > 1:
            best, worst = rates[0], rates[-1]
            found.append(
                f"Pooled by model (each row pools the systems listed under 'What each model row pools'): "
                f"{best['model']} has a judged pass rate of {_pct(best['pass_rate'])} ({_interval_text(best)}); "
                f"{worst['model']} {_pct(worst['pass_rate'])} ({_interval_text(worst)})."
            )
        comparisons = [(c["higher"], c["lower"], c) for c in r["comparisons"]]
        measure = " in judged pass rate"
    # the pairs a reader can tell apart first: they are the ranking's news
    found += [_distinguishable(a, b, c, measure) for a, b, c in comparisons if c["distinguishable"]]
    found += [_indistinguishable(a, b, c, measure) for a, b, c in comparisons if not c["distinguishable"]]
    if r["by"] == "system":
        found += _system_mode_findings(r)
    pooled = "" if r["by"] == "model" else "per model, pooled, "
    lead = {"coder": r["coder"], **{k: r[k] for k in _VIEW_KEYS}}
    found += _coder_findings(lead, rates, f"`{r['coder']}`: " if r["beside"] else "", r["by"] == "model")
    for view in r["beside"]:
        found += _coder_findings(view, rates, f"`{view['coder']}` ({pooled}side by side): ")
    d = r["difficulty"]
    h = d["held_out"]
    irt_worse = "irt_log_loss" in h and h["irt_log_loss"] > h["baseline_log_loss"]
    if "irt_log_loss" in h:
        found.append(
            f"Held out (computed {h['computed']}): IRT predicts unseen attempts with log-loss {h['irt_log_loss']:.3f} and AUC {h['irt_auc']:.3f}, "
            f"against {h['baseline_log_loss']:.3f} and {h['baseline_auc']:.3f} for the per-task pass rate "
            f"({h['held_out']} attempts)."
        )
    if irt_worse:
        found.append(
            "IRT predicts held-out attempts worse (log-loss) than the per-task pass rate here, so measured tiers and "
            "misplaced-task lists are not relied on; rank tasks by their pass rate instead."
        )
    elif d["authored_matches_measured"] is not None:
        found.append(
            f"Authored tiers match measured difficulty for {_pct(d['authored_matches_measured'])} of tasks; "
            f"{len(d['misplaced'])} most misplaced are listed."
        )
    if r["by"] == "system":
        banded = {a["system"]: a for a in r["system_abilities"]}
        for s in r["system_signal"]:
            a = banded.get(s["system"])
            band = (
                f"; {_pct(a['share_in_band'])} of its {a['tasks']} fitted tasks are in the {r['band'][0]:.1f}–"
                f"{r['band'][1]:.1f} band of predicted pass rate (a fit whose unit is the system)"
                if a
                else ""
            )
            found.append(
                f"{s['system']}: {_pct(s['share_mixed'])} of its {s['tasks']} tasks have mixed outcomes (solved in "
                f"some attempts, not all): the ones that still carry training signal for it{band}."
            )
    else:
        for s in r["signal"]:
            found.append(
                f"{s['model']} (pooled by model): {_pct(s['share_in_band'])} of its tasks are in the "
                f"{r['band'][0]:.1f}–{r['band'][1]:.1f} band of predicted pass rate; {_pct(s['share_mixed'])} have "
                "mixed outcomes (0 < p < 1)."
            )
    for m in sorted({x["model"] for x in r["milestones"]}):
        stops = [x for x in r["milestones"] if x["model"] == m and x["first_failed_milestone"] is not None]
        if stops:
            worst = max(stops, key=lambda x: x["attempts"])
            found.append(
                f"{m}: most milestone runs stop at milestone {worst['first_failed_milestone']} of "
                f"{worst['milestones_total']} ({worst['task_type']})."
            )
    no_verdict = sum(e["attempts"] for e in r["harness_errors"] if e["verdict"].startswith("none"))
    agents = sum(e["attempts"] for e in r["harness_errors"] if e["verdict"] == queries.AGENT_FAULT_FAILED)
    despite = sum(e["attempts"] for e in r["harness_errors"] if e["verdict"] == queries.AGENT_FAULT_PASSED)
    flagged = sum(e["attempts"] for e in r["harness_errors"] if "flagged" in e["verdict"])
    if no_verdict:
        found.append(
            f"{no_verdict} attempts hit an infrastructure fault (harness_failure) and have no verdict; they "
            f"are left out of pass rates and failures."
        )
    if agents:
        found.append(
            f"{agents} attempts failed with the agent's own fault recorded (a timeout, a crash): the agent's "
            f"failures, counted in pass rates, not harness faults."
        )
    if despite:
        found.append(
            f"{despite} attempts passed although the harness recorded an agent fault (the tests passed after "
            f"a timeout or a crash): passes, counted as passes."
        )
    suspect = [t for t in r["task_health"] if t["flagged"]]
    if suspect:
        found.append(
            f"Task health: {len(suspect)} task(s) look broken or trivial and are kept out of difficulty fits, "
            "capability evidence and task mixes until checked: "
            + "; ".join(
                f"{t['task_id']} ({t['health']}; {t['attempts']} attempts by {t['systems']} systems, "
                f"{t['harness_faults']} harness faults, {t['timed_out']} timeouts)"
                for t in suspect[:8]
            )
            + ("; …" if len(suspect) > 8 else "")
            + ". `curriculab tasks checked ID` puts a task back once a person has looked."
        )
    for e in r["endings"]:
        if e["failures"] and e["timeout_share"] >= queries.TIME_BOUND:
            long = [t["task_id"] for t in r["long_tasks"] if t["system"] == e["system"]][:3]
            found.append(
                f"{e['system']}: {e['timed_out']} of its {e['failures']} failures ({_pct(e['timeout_share'])}; "
                f"Wilson 95% CI {_pct(e['ci_low'])}–{_pct(e['ci_high'])}) ran out of time: its failures are about "
                f"time and long tasks ({', '.join(long)}), whatever the tests' codes say of them; give it more time "
                f"or practise shorter steps before reading them as difficulty."
            )
    if flagged:
        found.append(
            f"{flagged} attempts hit an infrastructure fault but the tests still gave a verdict; those "
            f"verdicts stand and are counted, flagged in `v_pass_rates.flagged`."
        )
    abilities = {a["model"]: a for a in d["abilities"]}
    for e in r["evidence"]:
        if e["without_actions"]:
            found.append(
                f"{e['model']}: {e['without_actions']} of its {e['attempts']} attempts have no logged actions "
                f"({e['failures_without_actions']} of them failures; {e['installed_agent']} from installed agents, "
                f"{e['steps_lost_on_ingest']} whose trajectory was missing or unreadable): coders could not judge them."
            )
        a = abilities.get(e["model"])
        if e["attempts_per_task"] <= 1 and a is not None:
            found.append(
                f"{e['model']}: one attempt per task ({e['tasks']} tasks), so its ability is known only to "
                f"±{1.96 * a['ability_se']:.2f} (95%, θ = {a['ability']:.2f}); its per-task results and rankings "
                f"carry that uncertainty."
            )
    quarantined = sum(q["inputs"] for q in r["quarantined"])
    if quarantined:
        found.append(
            f"{quarantined} inputs were quarantined at ingest and are in no table here "
            f"(`select * from ingest_errors where severity = 'error'`)."
        )
    for u in r["unknown_models"]:
        found.append(
            f"{u['attempts']} attempts ({u['runs']} run(s)) name no model; they are reported as '{u['attributed_to']}'."
        )
    return found


def _spread_text(system: dict[str, Any]) -> str:
    """A system's spread as the `systems` read states it: over replicate runs or attempt indices."""
    if system["spread_low"] is None:
        return "one attempt per task: no spread"
    over = "runs" if system["spread_method"] == "replicate runs" else "attempt i of every task"
    return f"{_pct(system['spread_low'])}–{_pct(system['spread_high'])} over {system['replicates']} {over}"


def _system_mode_findings(r: Report) -> list[str]:
    """Per system, its top failure mode from the leading coder (shares of the failures it could judge,
    as the planner reads them for that system), and a bottleneck only where every system shares it."""
    found = []
    top: dict[str, list[Row]] = {}
    for row in r["system_failure_modes"]:
        top.setdefault(row["system"], []).append(row)
    for system, rows in top.items():
        t = rows[0]
        problems = _unusable(t)
        if problems:
            found.append(
                f"{system}: no top failure mode stated — {t['code']} leads ({t['n']} of {t['applied']} judged "
                f"failures) but {'; and '.join(problems)}."
            )
            continue
        timed = (
            f" {t['timed_out']} of those {t['n']} ran out of time (agent_timeout): read them as time, not as work "
            "the tests found wrong."
            if t["timed_out"] and t["timed_out"] >= queries.TIME_BOUND * t["n"]
            else ""
        )
        found.append(
            f"{system}: the top failure mode is {t['code']}, in {_pct(t['share'])} of the failures the coder could "
            f"judge ({t['n']} of {t['applied']}; 95% CI over tasks {_pct(t['cluster_low'])}–{_pct(t['cluster_high'])}; "
            f"coverage {_pct(t['coverage'])} of {t['failures']} failures; for planning: {t['for_planning']}).{timed}"
        )
    firsts = {rows[0]["code"] for rows in top.values()}
    if len(top) > 1 and len(firsts) == 1:
        found.append(f"{firsts.pop()} is the top failure mode of every one of the {len(top)} systems.")
    elif len(top) > 1:
        leads = Counter(rows[0]["code"] for rows in top.values())
        found.append(
            "No failure mode leads for every system: "
            + ", ".join(f"{code} leads for {n}" for code, n in leads.most_common())
            + "."
        )
    return found


def _distinguishable(higher: str, lower: str, c: dict[str, Any], measure: str = "") -> str:
    return (
        f"{higher} is ahead of {lower}, distinguishably: the {c['difference'] * 100:+.1f}-point difference{measure} "
        f"has a task-clustered 95% CI of {_signed(c['ci_low'])} to {_signed(c['ci_high'])} points."
    )


def _indistinguishable(higher: str, lower: str, c: dict[str, Any], measure: str = "") -> str:
    return (
        f"{higher} and {lower} are not distinguishable: the {c['difference'] * 100:+.1f}-point difference{measure} "
        f"has a task-clustered 95% CI of {_signed(c['ci_low'])} to {_signed(c['ci_high'])} points."
    )


def _interval_text(row: dict[str, Any]) -> str:
    if row["cluster_low"] is None:
        return f"Wilson 95% CI {_pct(row['ci_low'])}–{_pct(row['ci_high'])}; too few tasks for an interval over tasks"
    return f"95% CI over tasks {_pct(row['cluster_low'])}–{_pct(row['cluster_high'])}"


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f}"


def half_up(value: float, places: int = 3, scale: int = 0) -> str:
    """`value` × 10**`scale` to `places` decimals, half away from zero, from its shortest decimal form
    (a share of counts such as 197/400 prints 0.4925 and rounds to 0.493, where binary `:.3f` gives
    0.492); the scaling is exact, so a percentage rounds as the share reads."""
    if not math.isfinite(value):
        return str(value)
    exact = decimal.Decimal(repr(value)).scaleb(scale)
    return str(exact.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP))


def _md_table(rows: list[Row], columns: list[str] | None = None, empty: str = "") -> str:
    if not rows:
        return f"_none{': ' + empty if empty else ''}_\n"
    columns = columns or list(rows[0])

    def fmt(v: Any) -> str:
        return half_up(v) if isinstance(v, float) else ("" if v is None else str(v))

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


_VIEW_KEYS = ("coverage", "top_failure_modes", "bottlenecks", "cooccurrence", "failures_by_tier")


def _coder_sections(view: dict[str, Any], coverage_min: float, label: str, pooled: str = "") -> list[Section]:
    """One coder's failure sections per model (`label` names the coder when several are side by
    side; `pooled` starts every title: these rows pool a model's systems)."""
    coded = any(c["coded_failures"] for c in view["coverage"])
    no_codes = f"no failure codes from `{view['coder']}` (run `curriculab code`)" if not coded else ""
    sections: list[Section] = [
        (
            pooled + f"coder coverage{label}: failed attempts the coder could judge (a share is stated from "
            f"{_pct(coverage_min)})",
            view["coverage"],
            None,
            "no failed attempts",
        )
    ]
    for m, rows in view["top_failure_modes"].items():
        sections.append(
            (
                pooled + f"top failure modes{label} — {m} (share of the failures the coder could judge)",
                rows,
                [
                    "code",
                    "n",
                    "timed_out",
                    "applied",
                    "failures",
                    "share",
                    "coverage",
                    "ci_low",
                    "ci_high",
                    "cluster_low",
                    "cluster_high",
                    "reliable",
                    "in_sample",
                    "for_planning",
                ],
                "",
            )
        )
    if not view["top_failure_modes"]:
        sections.append((pooled + f"top failure modes{label}", [], None, no_codes or "no failed attempt got a code"))
    return sections + [
        (
            pooled + f"bottlenecks{label}",
            [
                {"code": b["code"], "within_top": b["within_top"], "usable": b["usable"], **b["shares"]}
                for b in view["bottlenecks"]
            ],
            None,
            no_codes or "no code ranks at the top for every model (or fewer than two models have coded failures)",
        ),
        (
            pooled + f"code co-occurrence in failed attempts{label}",
            [{"codes": " + ".join(c["codes"]), "n": c["n"], "lift": c["lift"]} for c in view["cooccurrence"]],
            None,
            no_codes or "no failed attempt has two codes",
        ),
        (
            pooled + f"failure modes by tier{label}",
            view["failures_by_tier"],
            None,
            no_codes or "no coded failures on tasks with a tier",
        ),
    ]


def _ability_row(row: dict[str, Any]) -> dict[str, Any]:
    """A stored ability as the report names it: the IRT ability, and the pass rate it was fitted on as what it is."""
    named = {k: v for k, v in row.items() if k != "pass_rate"}
    return {**named, "judged_pass_rate_fitted": row.get("pass_rate")}


def _sections(r: Report) -> list[Section]:
    """(title, rows, columns, why it may be empty) for every table, in order: one list for md and html."""
    held = r["difficulty"]["held_out"]
    irt_worse = "irt_log_loss" in held and held["irt_log_loss"] > held["baseline_log_loss"]
    pooled = "Pooled by model — "  # the first pooled table says which systems each model row pools
    systems = [
        (
            "Systems: agent × model, in the leaderboard's order (leaderboard accuracy: every trial counts, an error is "
            "a failure, mean over runs; the spread over replicate runs, or over attempt i of every task where one run "
            "holds them all; judged pass rate over attempts with a verdict beside it)",
            r["systems"],
            [
                "agent",
                "agent_version",
                "model",
                "runs",
                "trials",
                "attempts",
                "passes",
                "pass_rate",
                "errors",
                "leaderboard_accuracy",
                "replicates",
                "spread_low",
                "spread_high",
                "spread_method",
            ],
            "no attempts",
        ),
        (
            "Ranking of systems: each against the next in the leaderboard's order, by its share of trials solved "
            "(every trial counts, as on the leaderboard; task-clustered 95% CI of the difference)",
            r["system_comparisons"],
            None,
            "fewer than two systems with a pass rate",
        ),
        (
            "pass@k per system (unbiased, over the same tasks for every system; short@k: tasks with fewer than k)",
            r["system_pass_at_k"],
            None,
            "no attempts",
        ),
        (
            f"Top failure modes per system (`{r['coder']}`; share of the failures the coder could judge; timed_out: "
            "those that ran out of time; for_planning: what the planner does with the code for that system)",
            r["system_failure_modes"],
            None,
            "no failed attempt got a code",
        ),
        (
            "System abilities (IRT ability θ, a fit whose unit is the system; flagged tasks left out; in_band: its "
            f"fitted tasks with a predicted pass rate in {r['band'][0]}–{r['band'][1]})",
            r["system_abilities"],
            None,
            "fewer than two systems or tasks",
        ),
        ("Signal per system: tasks with mixed outcomes", r["system_signal"], None, "no attempts with a verdict"),
    ]
    models = [
        (pooled + "what each model row pools (agents and runs)", r["pooling"], None, "no attempts"),
        (
            pooled
            + "judged pass rates (harness errors apart; intervals: Wilson over attempts, and bootstrap over tasks)",
            r["overview"],
            [
                "model",
                "attempts",
                "passes",
                "pass_rate",
                "ci_low",
                "ci_high",
                "cluster_low",
                "cluster_high",
                "harness_errors",
                "flagged",
            ],
            "no attempts",
        ),
        (
            pooled + "ranking: each model against the next (task-clustered 95% CI of the difference)",
            r["comparisons"],
            None,
            "fewer than two models with a pass rate",
        ),
    ]
    model_views = []
    for view in [{"coder": r["coder"], **{k: r[k] for k in _VIEW_KEYS}}, *r["beside"]]:
        model_views += _coder_sections(view, r["coverage_min"], f" — `{view['coder']}`" if r["beside"] else "", pooled)
    difficulty = [
        (
            "Authored tier × measured tier (tasks)"
            + (" — not relied on: IRT is worse than the per-task pass rate held out" if irt_worse else ""),
            r["difficulty"]["calibration"],
            None,
            "no task has an authored tier",
        ),
        ("Most misplaced tasks", r["difficulty"]["misplaced"], None, "no task with an authored tier is misplaced"),
        (
            "Held-out check" + (f" (computed {held['computed']})" if "computed" in held else ""),
            [] if "error" in held else [{k: v for k, v in held.items() if k != "computed"}],
            None,
            held.get("error", ""),
        ),
        (
            pooled + "model abilities (IRT ability θ; judged_pass_rate_fitted: over the fitted tasks only)",
            [_ability_row(a) for a in r["difficulty"]["abilities"]],
            None,
            "no fit",
        ),
        (pooled + f"signal: informative band {r['band'][0]}–{r['band'][1]}", r["signal"], None, "no fit"),
        (pooled + "pass@k (unbiased, over the same tasks for every model)", r["pass_at_k"], None, "no attempts"),
        ("Milestones: first failing milestone", r["milestones"], None, "no milestone-graded attempts"),
        (
            "How failures ended, per system (the harness's record: out of time, another agent fault, or at the "
            "tests' verdict), beside the tests' codes",
            r["endings"],
            [
                "system",
                "attempts",
                "failures",
                "timed_out",
                "crashed",
                "to_verdict",
                "timeout_share",
                "ci_low",
                "ci_high",
                "passed_despite_fault",
            ],
            "no attempts",
        ),
        ("Tasks each system ran out of time on most", r["long_tasks"], None, "no failure ran out of time"),
        (
            "Harness errors: infrastructure faults (no verdict) and the agent's own faults (counted)",
            r["harness_errors"],
            None,
            "no attempt hit a harness fault",
        ),
        (
            "Task health: tasks never or always solved (flagged ones are kept out of fits and mixes until checked)",
            [t for t in r["task_health"] if t["flagged"] or t["checked"]],
            [
                "task_id",
                "health",
                "flagged",
                "checked",
                "attempts",
                "systems",
                "passes",
                "systems_solved",
                "harness_faults",
                "timed_out",
            ],
            f"no task was never or always solved in {queries.HEALTH_MIN_ATTEMPTS}+ attempts by "
            f"{queries.HEALTH_MIN_SYSTEMS}+ systems",
        ),
        ("Solve matrix: passes/attempts per task and system", r["solve_matrix"], None, "no attempts"),
        ("Attempts that name no model", r["unknown_models"], None, "every attempt names its model"),
        ("What the coders could see: attempts without logged actions, per model", r["evidence"], None, "no attempts"),
        ("Quarantined inputs (not in any table above)", r["quarantined"], None, "nothing was quarantined"),
        (
            "Training runs (GRPO): rollouts, pass rate, groups with no gradient",
            r["training_runs"],
            None,
            "no training run has landed (curriculab train / loop)",
        ),
        (
            "Rollout failure codes by training run (verifier; share of failed rollouts, 95% CI)",
            r["rollout_codes"],
            None,
            "no coded rollouts (they are coded as they land; `curriculab code --coder verifier` codes older ones)",
        ),
    ]
    pooled_rest = [x for x in difficulty if x[0].startswith(pooled)]
    neutral = [x for x in difficulty if not x[0].startswith(pooled)]
    if r["by"] == "system":
        return systems + neutral + models + model_views + pooled_rest
    return models + model_views + pooled_rest + systems + neutral


def _coders_text(r: Report) -> str:
    """Whose codes the report shows: `rules` (v1), and beside it `verifier` (v3), ..."""
    named = [f"`{v['coder']}` ({v['taxonomy_version'] or 'none'})" for v in [r.as_dict(), *r["beside"]]]
    return named[0] + (
        ", and beside it " + ", ".join(named[1:]) + " (side by side, not merged)" if len(named) > 1 else ""
    )


def to_markdown(r: Report) -> str:
    parts = [
        f"# curriculab report{' — ' + r['model'] if r['model'] else ''}",
        f"_Generated {r['generated_at']}; failure codes from {_coders_text(r)}._",
        "",
        "## Findings",
        *[f"- {f}" for f in r["findings"]],
        "",
    ]
    for title, rows, columns, empty in _sections(r):
        parts += [f"## {title}", _md_table(rows, columns, empty)]
    return "\n".join(parts)


def _bar_errors(values: list[float | None], lows: list[float | None], highs: list[float | None]) -> dict[str, Any]:
    return {
        "type": "data",
        "symmetric": False,
        "array": [h - v if h is not None and v is not None else 0 for v, h in zip(values, highs)],
        "arrayminus": [v - lo if lo is not None and v is not None else 0 for v, lo in zip(values, lows)],
    }


def _failure_bars(figure: Any, groups: dict[str, list[Row]]) -> None:
    """One bar series per group (a system, or a pooled model): each code's share of its judged
    failures, with its task-clustered interval."""
    for name, rows in groups.items():
        shares = [x["share"] for x in rows]
        figure.add_bar(
            name=name,
            x=[x["code"] for x in rows],
            y=shares,
            error_y=_bar_errors(shares, [x["cluster_low"] for x in rows], [x["cluster_high"] for x in rows]),
        )


def _figures(r: Report) -> list[Any]:
    """The report's charts: per system (agent · model) by default; with `by="model"`, models pooled,
    each chart titled as pooled and naming the agents each model pools, the systems' ranking after."""
    import plotly.graph_objects as go

    share_axis = {"range": [0, 1], "tickformat": ".0%"}
    systems = [x for x in r["systems"] if x["pass_rate"] is not None][:30]
    ranking = None
    if systems:
        names = [queries.system_name(x["agent"], x["model"]) for x in systems]
        ranking = go.Figure(
            layout={
                "title": "Systems (agent × model), in the leaderboard's order (whiskers: the leaderboard accuracy's "
                "spread over replicates; the judged pass rate's Wilson 95% CI)",
                "barmode": "group",
                "yaxis": share_axis,
            }
        )
        accuracy = [x["leaderboard_accuracy"] for x in systems]
        ranking.add_bar(
            name="leaderboard accuracy (every trial; errors count as failures)",
            x=names,
            y=accuracy,
            error_y=_bar_errors(accuracy, [x["spread_low"] for x in systems], [x["spread_high"] for x in systems]),
        )
        judged = [x["pass_rate"] for x in systems]
        ranking.add_bar(
            name="judged pass rate (attempts with a verdict)",
            x=names,
            y=judged,
            error_y=_bar_errors(judged, [x["ci_low"] for x in systems], [x["ci_high"] for x in systems]),
        )
    calibration = None
    if r["difficulty"]["calibration"]:  # no heatmap of empty rows where no task has an authored tier
        cal = r["difficulty"]["calibration"]
        tiers = list(TASK_TIERS)
        z = [
            [next((c["tasks"] for c in cal if c["tier_authored"] == a and c["measured_tier"] == m), 0) for m in tiers]
            for a in tiers
        ]
        calibration = go.Figure(
            go.Heatmap(
                z=z,
                x=[f"measured {t}" for t in tiers],
                y=[f"authored {t}" for t in tiers],
                text=z,
                texttemplate="%{text}",
                colorscale="Blues",
            ),
            layout={"title": "Authored vs measured tier (tasks)"},
        )
    if r["by"] == "system":
        modes = go.Figure(
            layout={
                "title": f"Top failure modes per system (`{r['coder']}`): share of the failures the coder could judge "
                "(95% CI over tasks)",
                "barmode": "group",
                "yaxis": share_axis,
            }
        )
        per_system: dict[str, list[Row]] = {}
        for row in r["system_failure_modes"]:
            per_system.setdefault(row["system"], []).append(row)
        _failure_bars(modes, per_system)
        abilities = r["system_abilities"]
        ability = go.Figure(
            go.Scatter(
                x=[a["ability"] for a in abilities],
                y=[a["system"] for a in abilities],
                mode="markers",
                error_x={"type": "data", "array": [1.96 * a["ability_se"] for a in abilities]},
            ),
            layout={
                "title": "System abilities θ (IRT, a fit whose unit is the system; flagged tasks left out; 95% CI)",
                "xaxis": {"title": "θ (logits)"},
                "yaxis": {"automargin": True, "autorange": "reversed"},
            },
        )
        banded = {a["system"]: a["share_in_band"] for a in abilities}
        signal = go.Figure(
            layout={
                "title": "Signal per system: tasks with mixed outcomes, and fitted tasks in the "
                f"{r['band'][0]}–{r['band'][1]} predicted-pass band (a fit whose unit is the system)",
                "barmode": "group",
                "yaxis": share_axis,
            }
        )
        names = [s["system"] for s in r["system_signal"]]
        signal.add_bar(name="mixed outcomes (observed)", x=names, y=[s["share_mixed"] for s in r["system_signal"]])
        if banded:
            signal.add_bar(name="in the band (predicted)", x=names, y=[banded.get(n) for n in names])
        return [
            f
            for f in (ranking, modes if per_system else None, ability if abilities else None, signal, calibration)
            if f
        ]
    pools = "; ".join(f"{p['model']}: {p['agent_names']}" for p in r["pooling"])
    pooled = f"<br><sup>each model pools its systems' agents — {html.escape(pools)}</sup>" if pools else ""
    ov = [o for o in r["overview"] if o["pass_rate"] is not None]
    rates = [o["pass_rate"] for o in ov]
    overview = go.Figure(
        go.Bar(
            x=[o["model"] for o in ov],
            y=rates,
            error_y=_bar_errors(rates, [o["cluster_low"] for o in ov], [o["cluster_high"] for o in ov]),
        ),
        layout={
            "title": f"Pooled by model — judged pass rate (95% CI, bootstrap over tasks){pooled}",
            "yaxis": share_axis,
        },
    )
    failure = go.Figure(
        layout={
            "title": f"Pooled by model — top failure modes: share of the failures the coder could judge{pooled}",
            "barmode": "group",
            "yaxis": share_axis,
        }
    )
    _failure_bars(failure, r["top_failure_modes"])
    sig = r["signal"]
    band = go.Figure(
        go.Bar(x=[s["model"] for s in sig], y=[s["share_in_band"] for s in sig]),
        layout={
            "title": f"Pooled by model — share of tasks in the {r['band'][0]}–{r['band'][1]} predicted-pass band{pooled}",
            "yaxis": share_axis,
        },
    )
    return [f for f in (overview, failure, calibration, band, ranking) if f]


def to_html(r: Report) -> str:
    """A standalone page: plotly.js is embedded once, so it opens offline."""
    figures = _figures(r)
    charts = "".join(
        f'<div class="chart">{f.to_html(full_html=False, include_plotlyjs=(i == 0))}</div>'
        for i, f in enumerate(figures)
    )
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in r["findings"])
    tables = "".join(
        f"<h2>{html.escape(title)}</h2>{_html_table(rows, columns, empty)}"
        for title, rows, columns, empty in _sections(r)
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>curriculab report</title>"
        f"<style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}table{{border-collapse:collapse}}"
        f"td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px}}</style></head><body>"
        f"<h1>curriculab report{(' — ' + html.escape(r['model'])) if r['model'] else ''}</h1>"
        f"<p>Generated {r['generated_at']}; failure codes from {html.escape(_coders_text(r))}.</p>"
        f"<h2>Findings</h2><ul>{findings}</ul>{charts}{tables}"
        f"<script type='application/json' id='report-data'>{html.escape(json.dumps(r.as_dict(), default=str))}</script></body></html>"
    )


def _html_table(rows: list[Row], columns: list[str] | None = None, empty: str = "") -> str:
    if not rows:
        return f"<p><em>none{html.escape(': ' + empty) if empty else ''}</em></p>"
    columns = columns or list(rows[0])

    def fmt(v: Any) -> str:
        return half_up(v) if isinstance(v, float) else ("" if v is None else html.escape(str(v)))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{fmt(row.get(c))}</td>" for c in columns) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
