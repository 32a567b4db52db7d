"""Measured difficulty: fit the IRT model on the store's attempts and save it, and check it on
held-out attempts. Reads go through `analysis.queries`, the one write through `Store.save_irt_fit`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from curriculab.analysis import queries
from curriculab.analysis.irt import IrtFit, fit_irt, measured_tiers
from curriculab.analysis.store import IrtCheck, IrtModel, IrtTask, Store
from curriculab.trajectory.errors import InputError

MIN_AUTHORED_FOR_SHARES = 30
"""Authored tiers set the measured tiers' shares only when at least this many (and half the tasks) have one."""


def _cells(rows: list[dict]) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(models, tasks, model index, task index, attempts, passes) per attempted (model, task) cell,
    from `attempt_cells` records."""
    if not rows:
        raise InputError("no passed or failed attempts to fit. Ingest trajectories with verdicts first")
    models = sorted({r["model"] for r in rows})
    tasks = sorted({r["task_id"] for r in rows})
    m_index = {m: i for i, m in enumerate(models)}
    t_index = {t: j for j, t in enumerate(tasks)}
    mi = np.array([m_index[r["model"]] for r in rows])
    ti = np.array([t_index[r["task_id"]] for r in rows])
    return (models, tasks, mi, ti, np.array([r["n"] for r in rows], float), np.array([r["k"] for r in rows], float))


def fit_store(store: Store, kind: str = "2pl") -> IrtFit:
    """Fit on every agent attempt (harness errors excluded) and replace the stored fit."""
    models, tasks, mi, ti, n, k = _cells(queries.attempt_cells.records(store))
    fit = fit_irt(mi, ti, n, k, models, tasks, kind=kind)
    authored = queries.authored_tier_counts(store)
    # A handful of authored labels must not re-cut the measured scale: their shares are used only
    # when they describe most of the fitted tasks; otherwise the cut is at measured tertiles.
    described = sum(authored.values()) >= max(MIN_AUTHORED_FOR_SHARES, len(tasks) / 2)
    tiers = measured_tiers(fit.difficulty, authored if described else None)
    task_n, task_k = np.bincount(ti, n, len(tasks)), np.bincount(ti, k, len(tasks))
    model_n, model_k = np.bincount(mi, n, len(models)), np.bincount(mi, k, len(models))
    try:  # stored with the fit, so a report reads it instead of fitting again
        held = held_out_check(store, kind=kind)
        check: IrtCheck | None = IrtCheck(
            kind,
            held.held_out,
            held.irt_log_loss,
            held.baseline_log_loss,
            held.irt_auc,
            held.baseline_auc,
        )
    except ValueError:  # no model tried a task twice
        check = None
    store.save_irt_fit(
        [
            IrtTask(
                t,
                float(fit.difficulty[j]),
                float(fit.difficulty_se[j]),
                float(fit.discrimination[j]),
                float(fit.discrimination_se[j]),
                int(task_n[j]),
                float(task_k[j] / task_n[j]),
                tiers[j],
                kind,
            )
            for j, t in enumerate(tasks)
        ],
        [
            IrtModel(
                m,
                float(fit.ability[i]),
                float(fit.ability_se[i]),
                int(model_n[i]),
                float(model_k[i] / model_n[i]),
                kind,
            )
            for i, m in enumerate(models)
        ],
        check,
    )
    return fit


@dataclass
class HeldOutCheck:
    """IRT vs the per-task pass rate at predicting attempts it did not see."""

    held_out: int
    """Attempts predicted (each model's last attempt at each task it tried more than once)."""
    irt_log_loss: float
    """Log-loss of the IRT predictions (lower is better)."""
    baseline_log_loss: float
    """Log-loss of the task's pass rate over the other attempts (Laplace-smoothed)."""
    irt_auc: float
    """AUC of the IRT predictions (higher is better)."""
    baseline_auc: float
    """AUC of the per-task pass-rate baseline."""


# Both in numpy: importing scikit-learn's metrics (and scipy with them) took most of a report's time.
# tests/analysis/test_stats_irt.py holds them to sklearn's log_loss and roc_auc_score.


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    """Mean negative log-likelihood of outcomes `y` (0/1) under probabilities `p`, clipped to [1e-6, 1 − 1e-6]."""
    p = np.clip(np.asarray(p, float), 1e-6, 1 - 1e-6)
    y = np.asarray(y, float)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    """Probability a random positive outscores a random negative (ties count half); NaN with one class.
    The Mann–Whitney form: the positives' mean rank among all scores, ties given their average rank."""
    y = np.asarray(y).astype(bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    score = np.asarray(score, float)
    order = np.argsort(score, kind="mergesort")
    ordered = score[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first index of each run of equal scores
    ends = np.r_[starts[1:], len(ordered)]
    ranks = np.empty(len(score))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)  # 1-based average rank of each run
    return float((ranks[y].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def held_out_check(store: Store, kind: str = "2pl") -> HeldOutCheck:
    """Fit on all but each (model, task)'s last attempt; predict that attempt."""
    test = [(r["model"], r["task_id"], r["passed"]) for r in queries.held_out_attempts.records(store)]
    if not test:
        raise InputError("no model attempted a task twice, so nothing can be held out. Ingest repeated attempts")
    models, tasks, mi, ti, n, k = _cells(queries.attempt_cells.records(store, train_only=True))
    fit = fit_irt(mi, ti, n, k, models, tasks, kind=kind)
    m_index = {m: i for i, m in enumerate(models)}
    t_index = {t: j for j, t in enumerate(tasks)}
    test_m = np.array([m_index[m] for m, _, _ in test])
    test_t = np.array([t_index[t] for _, t, _ in test])
    y = np.array([p for _, _, p in test], float)
    irt = fit.predict(test_m, test_t)
    # the baseline: the task's pass rate over the training attempts, Laplace-smoothed
    baseline = ((np.bincount(ti, k, len(tasks)) + 1) / (np.bincount(ti, n, len(tasks)) + 2))[test_t]
    return HeldOutCheck(
        held_out=len(test),
        irt_log_loss=_log_loss(y, irt),
        baseline_log_loss=_log_loss(y, baseline),
        irt_auc=_auc(y, irt),
        baseline_auc=_auc(y, baseline),
    )


@dataclass
class SystemFit:
    """An IRT fit whose unit is the system (agent · model), over the `queries.solve_matrix` rows of
    unflagged tasks: where agents share a model, the stored fit (its unit is the model, which the
    planner reads) pools them. Both lists are empty when fewer than two systems or tasks remain."""

    abilities: list[dict[str, Any]]
    """Per system, best first: system, model, ability (θ), ability_se, tasks (fitted tasks it has a
    verdict on), in_band (of those, the tasks whose predicted pass rate lies in `band`), share_in_band."""
    tasks: list[dict[str, Any]]
    """Per fitted task, hardest first: task_id, difficulty (b), difficulty_se, discrimination, attempts,
    passes, pass_rate (over every system's attempts with a verdict)."""
    band: tuple[float, float]
    """The predicted pass-rate band that still carries training signal."""


def fit_systems(
    solve_matrix: list[dict[str, Any]], flagged: set[str], band: tuple[float, float] = (0.2, 0.8), kind: str = "2pl"
) -> SystemFit:
    """The `SystemFit` of `queries.solve_matrix` rows, tasks in `flagged` left out."""
    lo, hi = band
    rows = [r for r in solve_matrix if r["attempts"] and r["task_id"] not in flagged]
    if len({r["system"] for r in rows}) < 2 or len({r["task_id"] for r in rows}) < 2:
        return SystemFit([], [], (lo, hi))
    cells = [{"model": r["system"], "task_id": r["task_id"], "n": r["attempts"], "k": r["passes"]} for r in rows]
    systems, tasks, si, ti, n, k = _cells(cells)
    fit = fit_irt(si, ti, n, k, systems, tasks, kind=kind)
    predicted = fit.predict(si, ti)
    in_band = np.bincount(si, (predicted >= lo) & (predicted <= hi), len(systems))
    fitted = np.bincount(si, minlength=len(systems))
    model = {r["system"]: r["model"] for r in rows}
    abilities = [
        {
            "system": s,
            "model": model[s],
            "ability": float(fit.ability[i]),
            "ability_se": float(fit.ability_se[i]),
            "tasks": int(fitted[i]),
            "in_band": int(in_band[i]),
            "share_in_band": float(in_band[i] / fitted[i]),
        }
        for i, s in enumerate(systems)
    ]
    task_n, task_k = np.bincount(ti, n, len(tasks)), np.bincount(ti, k, len(tasks))
    per_task = [
        {
            "task_id": t,
            "difficulty": float(fit.difficulty[j]),
            "difficulty_se": float(fit.difficulty_se[j]),
            "discrimination": float(fit.discrimination[j]),
            "attempts": int(task_n[j]),
            "passes": int(task_k[j]),
            "pass_rate": float(task_k[j] / task_n[j]),
        }
        for j, t in enumerate(tasks)
    ]
    return SystemFit(
        sorted(abilities, key=lambda r: -r["ability"]), sorted(per_task, key=lambda r: -r["difficulty"]), (lo, hi)
    )


def system_fit(
    store: Store, band: tuple[float, float] = (0.2, 0.8), scope: queries.Scope | None = None, kind: str = "2pl"
) -> SystemFit:
    """`fit_systems` over every attempt in the store (as the stored fit), flagged tasks left out; with
    a `scope`, the systems and tasks its attempts hold are the ones returned (the Difficulty page's read)."""
    reads: dict[str, tuple[Any, dict[str, Any]]] = {
        "matrix": (queries.solve_matrix, {}),
        "flagged": (queries.task_health, {"flagged_only": True}),
    }
    if scope is not None:
        reads["scoped"] = (queries.solve_matrix, {"scope": scope})
    rows = queries.records_together(store, reads)
    fit = fit_systems(rows["matrix"], {r["task_id"] for r in rows["flagged"]}, band, kind)
    if scope is None:
        return fit
    held = [r for r in rows["scoped"] if r["attempts"]]
    systems, tasks = {r["system"] for r in held}, {r["task_id"] for r in held}
    return SystemFit(
        [a for a in fit.abilities if a["system"] in systems], [t for t in fit.tasks if t["task_id"] in tasks], fit.band
    )
