"""Run coders over the store and record what they found, with evidence, and where they abstained."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.store import Store, check_filter
from curriculab.analysis.store.store import Row
from curriculab.taxonomy.coders.rules import CODER, RULES, coder_steps
from curriculab.taxonomy.taxonomy import load_taxonomy
from curriculab.taxonomy.versions import NEWEST
from curriculab.trajectory.errors import InputError


@dataclass
class CodingReport:
    """What one coding pass found, per code."""

    coder: str
    """Coder that ran (`rules`, `classifier:<id>`, `judge:<model>`)."""
    taxonomy_version: str
    """Taxonomy the codes come from."""
    trajectories: int = 0
    """Trajectories coded."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per code: how many trajectories were present / absent / not_applicable."""


OPAQUE_REASON = "installed agent: actions not logged"
"""Why behavioural coders abstain on a trajectory whose source shows only how the agent was launched."""
IN_SAMPLE_PREFIX = "in-sample: trained on labels by"
"""Marks a classifier's statuses on trajectories it was trained on (agreement there is in-sample)."""


def run_rule_coders(store: Store, where: str | None = None, taxonomy_version: str | None = None) -> CodingReport:
    """Run every rule coder of the taxonomy over the trajectories matching `where` (a filter on
    `trajectories`). Replaces earlier rule codes for those trajectories, so re-running is idempotent.
    """
    taxonomy = load_taxonomy(taxonomy_version)
    rules = [rule for rule in RULES if rule.serves(taxonomy)]
    if where:
        check_filter(store, where)
    # the shell reading (what each command may write, what it runs) is Python: once per distinct line
    commands = queries.agent_command_lines(store, where)
    coded = store.code_with_rules(
        rules,
        coder_steps(commands),
        where=where,
        taxonomy_version=taxonomy.version,
        coder=CODER,
        opaque_reason=OPAQUE_REASON,
    )
    counts: dict[str, dict[str, int]] = {}
    for code, status, n in coded.counts:
        counts.setdefault(code, {"present": 0, "absent": 0, "not_applicable": 0})[status] = n
    return CodingReport(coder=CODER, taxonomy_version=taxonomy.version, trajectories=coded.trajectories, counts=counts)


VERIFIER_ANNOTATOR = "(by construction)"
"""The `annotator` of the verifier's reliability rows: its codes are exact, not measured against people."""
COMPLETION_ONLY = "not a single-turn completion: the completion codes do not apply"
TRIAL_ONLY = "a single-turn completion: its completion codes say why it failed"
NO_TESTS = "no per-test results to read"


def run_verifier_coder(
    store: Store, where: str | None = None, *, run_id: str | None = None, uncoded_only: bool = False
) -> CodingReport:
    """Code every trajectory matching `where` (and `run_id`) with the v3 verifier-derived codes.

    A single-turn completion (a rollout: its agent step carries `raw.completion`) gets every
    completion code present or absent; an agent trial with per-test results gets every trial
    code; what a trajectory cannot show is `not_applicable` with the reason. Evidence is the
    completion step; the rationale names the failing tests. Reliability is recorded as exact
    (`method = verifier`), so the planner may act on these codes without labels. `uncoded_only`
    skips trajectories the verifier already coded (each checkpoint codes only what is new).
    """
    from curriculab.taxonomy.coders import verifier

    taxonomy = load_taxonomy(verifier.TAXONOMY_VERSION)
    chosen, tests = queries.verifier_evidence(
        store, where, run_id=run_id, uncoded_by=verifier.CODER if uncoded_only else None
    )
    by_trajectory: dict[str, list[Any]] = {}
    for row in queries.records(tests):
        by_trajectory.setdefault(row["trajectory_id"], []).append(
            verifier.TestEvidence(row["test_id"], row["tier"], bool(row["passed"]), row["status"], row["detail"])
        )
    present: list[Row] = []
    judged: list[tuple[str, str, str, str | None]] = []
    for row in queries.records(chosen):
        tid, results = row["trajectory_id"], by_trajectory.get(row["trajectory_id"], [])
        if row["completion_step"] is not None:
            found = verifier.code_completion(row["completion"] or "", results, row["finish_reason"], row["entry_point"])
            judged += [(tid, c, "not_applicable", TRIAL_ONLY) for c in verifier.TRIAL_CODES]
            evidence = [int(row["completion_step"])]
        elif results:
            found = verifier.code_trial(results, row["outcome"], row["harness_error"])
            judged += [(tid, c, "not_applicable", COMPLETION_ONLY) for c in verifier.COMPLETION_CODES]
            evidence = []
        else:
            judged += [
                (tid, c, "not_applicable", NO_TESTS) for c in (*verifier.COMPLETION_CODES, *verifier.TRIAL_CODES)
            ]
            continue
        for code, finding in found.items():
            judged.append((tid, code, "present" if finding.present else "absent", None))
            if finding.present:
                failing = f" (failing: {', '.join(finding.tests)})" if finding.tests else ""
                present.append((tid, code, 1.0, evidence, finding.rationale + failing))
    store.replace_codes(verifier.CODER, taxonomy.version, list(chosen["trajectory_id"]), present, judged)
    store.save_reliability(
        verifier.CODER,
        VERIFIER_ANNOTATOR,
        taxonomy.version,
        [(c, 0, None, None, 1.0, True, False) for c in (*verifier.COMPLETION_CODES, *verifier.TRIAL_CODES)],
        method="verifier",
    )
    return CodingReport(
        coder=verifier.CODER,
        taxonomy_version=taxonomy.version,
        trajectories=len(chosen),
        counts=_counts([(t, c, s) for t, c, s, _ in judged]),
    )


def run_environment_coder(
    store: Store, where: str | None = None, *, run_id: str | None = None, uncoded_only: bool = False
) -> CodingReport:
    """Code every trajectory matching `where` (and `run_id`) whose steps carry what a terminal
    episode's environment observed, with the environment's process codes
    (`taxonomy.coders.environment`). Reliability is recorded as exact (`method = environment`),
    so the planner may act on them without labels. `uncoded_only` skips trajectories already coded."""
    import json

    from curriculab.taxonomy.coders import environment

    taxonomy = load_taxonomy(environment.TAXONOMY_VERSION)
    chosen, commands = queries.environment_evidence(
        store, where, run_id=run_id, uncoded_by=environment.CODER if uncoded_only else None
    )
    by_trajectory: dict[str, list[tuple[int, environment.Observed]]] = {}
    replays: dict[str, environment.Replay] = {}  # what the harness saw, for the episodes it judged
    for row in queries.records(commands):
        if row["check_run"] is not None:
            replays[row["trajectory_id"]] = environment.Replay.from_record(json.loads(row["check_run"]))
        by_trajectory.setdefault(row["trajectory_id"], []).append(
            (
                int(row["step_idx"]),
                environment.Observed(
                    row["command"] or "",
                    row["exit_code"],
                    row["output"] or "",
                    tuple(json.loads(row["changed"])),
                    bool(row["timed_out"]),
                    bool(row["output_truncated"]),
                    None if row["executed"] is None else tuple(tuple(e) for e in json.loads(row["executed"])),
                ),
            )
        )
    present: list[Row] = []
    judged: list[tuple[str, str, str, str | None]] = []
    for row in queries.records(chosen):
        tid = row["trajectory_id"]
        seen = by_trajectory.get(tid, [])
        verdict = None if row["outcome"] == "error" else row["outcome"] == "passed"
        for code, finding in environment.code_episode([o for _, o in seen], verdict, replays.get(tid)).items():
            judged.append(
                (tid, code, finding.status, finding.rationale if finding.status == "not_applicable" else None)
            )
            if finding.status == "present":
                present.append((tid, code, 1.0, [seen[i][0] for i in finding.evidence], finding.rationale))
    store.replace_codes(environment.CODER, taxonomy.version, list(chosen["trajectory_id"]), present, judged)
    store.save_reliability(
        environment.CODER,
        VERIFIER_ANNOTATOR,
        taxonomy.version,
        [(c, 0, None, None, 1.0, True, False) for c in environment.CODES],
        method="environment",
    )
    return CodingReport(
        coder=environment.CODER,
        taxonomy_version=taxonomy.version,
        trajectories=len(chosen),
        counts=_counts([(t, c, s) for t, c, s, _ in judged]),
    )


@dataclass
class CoderAgreement:
    """How two coders agree on one code over the trajectories both judged."""

    code: str
    """The code."""
    n: int
    """Trajectories both coders judged (present or absent)."""
    both: int
    """Present for both."""
    only_first: int
    """Present for the first coder only."""
    only_second: int
    """Present for the second coder only."""
    kappa: float | None
    """Cohen's kappa (None when undefined: neither coder ever varies)."""

    @property
    def agreement(self) -> float | None:
        """Share of trajectories on which the two agree."""
        return (self.n - self.only_first - self.only_second) / self.n if self.n else None


def coder_agreement(
    store: Store, first: str, second: str, codes: list[str] | tuple[str, ...], taxonomy_version: str = NEWEST
) -> list[CoderAgreement]:
    """Per code, how `first` agrees with `second` (the reference, e.g. the environment) on the
    trajectories both judged; a trajectory either coder found not applicable is left out."""
    from curriculab.taxonomy.agreement import cohen_kappa

    statuses = queries.records(queries.coding_statuses(store, [first, second], list(codes), taxonomy_version))
    by_key: dict[tuple[str, str], dict[str, str]] = {}
    for row in statuses:
        by_key.setdefault((row["trajectory_id"], row["code"]), {})[row["coder"]] = row["status"]
    out = []
    for code in codes:
        pairs = [
            (seen[first] == "present", seen[second] == "present")
            for (_, c), seen in by_key.items()
            if c == code and {seen.get(first), seen.get(second)} <= {"present", "absent"}
        ]
        a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        out.append(
            CoderAgreement(
                code,
                len(pairs),
                sum(x and y for x, y in pairs),
                sum(x and not y for x, y in pairs),
                sum(y and not x for x, y in pairs),
                cohen_kappa(a, b) if pairs else None,
            )
        )
    return out


def _trajectory_texts(
    store: Store, selected: Any
) -> tuple[list[str], list[str], list[list[float]], dict[str, list[int]]]:
    """Rendered text, structural features and agent step ids of the `selected` trajectories."""
    from curriculab.taxonomy.render import render, structural_features

    meta = {row["trajectory_id"]: row["harness_error"] for row in queries.records(selected)}
    grouped: dict[str, list[dict[str, Any]]] = {t: [] for t in meta}
    for row in queries.records(queries.steps_of(store, list(meta))):
        grouped[row["trajectory_id"]].append(row)
    ids = sorted(grouped)
    texts = [render(grouped[t]) for t in ids]
    features = [structural_features(grouped[t], meta[t]) for t in ids]
    step_ids = {t: [s["step_idx"] for s in grouped[t]] for t in ids}
    return ids, texts, features, step_ids


def train_classifier_from_labels(
    store: Store, annotator: str, taxonomy_version: str | None = None, folds: int = 5
) -> Any:
    """Train the learned coder from one annotator's labels; returns a TrainedClassifier with CV agreement."""
    from curriculab.taxonomy.coders.classifier import train_classifier

    taxonomy = load_taxonomy(taxonomy_version)
    labelled = queries.labels_under(store, taxonomy)  # older versions' labels carried through the mapping
    labelled = labelled[labelled["annotator"] == annotator]
    if labelled.empty:
        raise InputError(
            f"no {taxonomy.version} labels by {annotator!r}. Import some with "
            f"`curriculab labels import FILE.csv --annotator {annotator}`"
        )
    labels: dict[str, dict[str, bool]] = {}
    for trajectory_id, code, present in zip(labelled["trajectory_id"], labelled["code"], labelled["present"]):
        labels.setdefault(code, {})[trajectory_id] = bool(present)
    selected = queries.selected_trajectories(store)
    selected = selected[selected["trajectory_id"].isin(set(labelled["trajectory_id"]))]
    ids, texts, features, _ = _trajectory_texts(store, selected)
    return train_classifier(ids, texts, features, labels, taxonomy.version, folds=folds, annotator=annotator)


def _record(
    store: Store,
    coder: str,
    version: str,
    selected: Any,
    present: list[Row],
    judged: list[tuple[str, str, str]],
    in_sample: tuple[str, set[str]] | None = None,
) -> None:
    """Write findings (trajectory_id, code, confidence, evidence, rationale) and statuses
    (trajectory_id, code, status) for `coder`, replacing its earlier ones on the `selected` trajectories.
    `in_sample` = (annotator, trajectories a classifier was trained on): their statuses say so."""
    opaque = set(selected.loc[~selected["actions_logged"].astype(bool), "trajectory_id"])
    present = [p for p in present if p[0] not in opaque or p[1] == "harness_failure"]
    judged = [(t, c, "not_applicable" if t in opaque and c != "harness_failure" else s) for t, c, s in judged]
    store.replace_codes(
        coder,
        version,
        list(selected["trajectory_id"]),
        present,
        [(t, c, s, _reason(t, s, opaque, in_sample)) for t, c, s in judged],
    )


def _reason(trajectory_id: str, status: str, opaque: set[str], in_sample: tuple[str, set[str]] | None) -> str | None:
    if trajectory_id in opaque and status == "not_applicable":
        return OPAQUE_REASON
    if in_sample and trajectory_id in in_sample[1]:
        return f"{IN_SAMPLE_PREFIX} {in_sample[0]}"
    return None


def _counts(judged: list[tuple[str, str, str]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for _, code, status in judged:
        counts.setdefault(code, {"present": 0, "absent": 0, "not_applicable": 0})[status] += 1
    return counts


def run_classifier(store: Store, model_path: Any, where: str | None = None, threshold: float = 0.5) -> CodingReport:
    """Apply a trained classifier to the trajectories matching `where`."""
    from curriculab.taxonomy.coders.classifier import load_classifier

    model = load_classifier(model_path)
    taxonomy = load_taxonomy(model.taxonomy_version)
    report = CodingReport(coder=model.coder, taxonomy_version=taxonomy.version)
    selected = queries.selected_trajectories(store, where)
    ids, texts, features, step_ids = _trajectory_texts(store, selected)
    probabilities = model.predict_proba(texts, features) if ids else {}
    present: list[Row] = []
    judged: list[tuple[str, str, str]] = []
    for code, p in probabilities.items():
        for trajectory_id, prob in zip(ids, p):
            hit = prob >= threshold
            judged.append((trajectory_id, code, "present" if hit else "absent"))
            if hit:
                present.append((trajectory_id, code, float(prob), [], f"classifier probability {prob:.2f}"))
    _record(
        store,
        model.coder,
        taxonomy.version,
        selected,
        present,
        judged,
        in_sample=(model.annotator, set(model.trained_on)) if model.annotator else None,
    )
    report.trajectories, report.counts = len(ids), _counts(judged)
    return report


@dataclass
class JudgeReport(CodingReport):
    """A coding report with what the judge got wrong."""

    rejected: list[str] = field(default_factory=list)
    """Answer parts refused (unknown codes, unknown steps, claims without evidence), per trajectory."""
    failed: list[str] = field(default_factory=list)
    """Trajectories with no usable answer after retries."""


def run_judge(
    store: Store,
    base_url: str,
    model: str,
    where: str | None = None,
    config: Any = None,
    taxonomy_version: str | None = None,
) -> JudgeReport:
    """Ask an OpenAI-compatible judge about every trajectory matching `where`."""
    from concurrent.futures import ThreadPoolExecutor

    from curriculab.taxonomy.coders.judge import JudgeConfig, judge, judged_codes

    config = config or JudgeConfig(base_url=base_url, model=model)
    taxonomy = load_taxonomy(taxonomy_version)
    coder = f"judge:{config.model}"
    report = JudgeReport(coder=coder, taxonomy_version=taxonomy.version)
    selected = queries.selected_trajectories(store, where)
    ids, texts, _, step_ids = _trajectory_texts(store, selected)
    with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        verdicts = list(
            pool.map(lambda k: judge(config, taxonomy, ids[k], texts[k], step_ids[ids[k]]), range(len(ids)))
        )
    present, judged = [], []
    for trajectory_id, verdict in zip(ids, verdicts):
        if verdict.error:
            report.failed.append(f"{trajectory_id}: {verdict.error}")
        report.rejected.extend(f"{trajectory_id}: {r}" for r in verdict.rejected)
        answered = {f.code for f in verdict.present} | set(verdict.absent)
        for finding in verdict.present:
            present.append((trajectory_id, finding.code, finding.confidence, finding.evidence_steps, finding.rationale))
        for code in judged_codes(taxonomy):
            status = (
                "present"
                if code in {f.code for f in verdict.present}
                else "absent"
                if code in answered
                else "not_applicable"
            )
            judged.append((trajectory_id, code, status))
    _record(store, coder, taxonomy.version, selected, present, judged)
    report.trajectories, report.counts = len(ids), _counts(judged)
    return report
