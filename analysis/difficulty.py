"""Measured difficulty: fit the IRT model on the store's attempts and save it, and check it on
held-out attempts. Reads go through `analysis.queries`, the one write through `Store.save_irt_fit`."""

from __future__ import annotations

from dataclasses import dataclass

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


def system_abilities(solve_matrix: list[dict], flagged: set[str], kind: str = "2pl") -> list[dict]:
    """Each system's (agent · model) ability from a fit whose unit is the system, over the
    `queries.solve_matrix` rows of tasks not in `flagged`: where agents share a model, the stored
    fit (its unit is the model, which the planner reads) pools them. Rows: system, ability,
    ability_se, best first; none when fewer than two systems or tasks remain."""
    cells = [
        {"model": r["system"], "task_id": r["task_id"], "n": r["attempts"], "k": r["passes"]}
        for r in solve_matrix
        if r["attempts"] and r["task_id"] not in flagged
    ]
    if len({c["model"] for c in cells}) < 2 or len({c["task_id"] for c in cells}) < 2:
        return []
    systems, tasks, mi, ti, n, k = _cells(cells)
    fit = fit_irt(mi, ti, n, k, systems, tasks, kind=kind)
    rows = [
        {"system": s, "ability": float(fit.ability[i]), "ability_se": float(fit.ability_se[i])}
        for i, s in enumerate(systems)
    ]
    return sorted(rows, key=lambda r: -r["ability"])
