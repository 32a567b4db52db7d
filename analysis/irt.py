"""Measured difficulty: a binomial item-response model fitted on models × tasks × attempts counts.

2PL: P(pass | model i, task j) = sigmoid(a_j (θ_i − b_j)); Rasch fixes a_j = 1. Fitted by
maximum a posteriori with weak priors (θ ~ N(0, 1) pins the scale, b ~ N(0, 3²),
log a ~ N(0, 0.5²)) over sparse cells: only the (model, task) pairs that were attempted.
Given the other blocks, every θ_i (and every b_j, every log a_j) is independent of the rest
of its block, so the fit alternates vectorised Fisher-scoring steps per block until no
parameter moves by more than `tol`. Standard errors are conditional (each parameter with the
others held at their estimates), from the Fisher information plus the prior precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from curriculab.trajectory.errors import InputError
from curriculab.trajectory.vocabulary import TASK_TIERS

PRIOR_SD_THETA = 1.0
PRIOR_SD_B = 3.0
PRIOR_SD_LOG_A = 0.5


@dataclass
class IrtFit:
    """Fitted parameters with their standard errors."""

    models: list[str]
    """Model names, in the order of `ability`."""
    tasks: list[str]
    """Task ids, in the order of `difficulty`."""
    ability: np.ndarray
    """θ per model (higher is stronger)."""
    ability_se: np.ndarray
    """Standard error of θ."""
    difficulty: np.ndarray
    """b per task (higher is harder; on θ's scale)."""
    difficulty_se: np.ndarray
    """Standard error of b."""
    discrimination: np.ndarray
    """a per task (1 for Rasch): how sharply the task separates weaker from stronger models."""
    discrimination_se: np.ndarray
    """Standard error of a (0 for Rasch)."""
    kind: str
    """`2pl` or `rasch`."""
    converged: bool
    """Whether the optimiser reported convergence."""
    iterations: int
    """Optimiser iterations."""

    def predict(self, model_idx: np.ndarray, task_idx: np.ndarray) -> np.ndarray:
        """Predicted pass probability for (model, task) index pairs."""
        z = self.discrimination[task_idx] * (self.ability[model_idx] - self.difficulty[task_idx])
        return _sigmoid(z)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # stable for large |z|


def fit_irt(
    model_idx: Sequence[int] | np.ndarray,
    task_idx: Sequence[int] | np.ndarray,
    attempts: Sequence[int] | np.ndarray,
    passes: Sequence[int] | np.ndarray,
    models: list[str],
    tasks: list[str],
    kind: str = "2pl",
    max_sweeps: int = 200,
    tol: float = 1e-4,
) -> IrtFit:
    """Fit on cells: `attempts[c]` tries of model `model_idx[c]` at task `task_idx[c]`, `passes[c]` passed."""
    if kind not in ("2pl", "rasch"):
        raise InputError(f"kind {kind!r} is not supported. Use '2pl' or 'rasch'")
    mi = np.asarray(model_idx, dtype=np.int64)
    ti = np.asarray(task_idx, dtype=np.int64)
    n = np.asarray(attempts, dtype=np.float64)
    k = np.asarray(passes, dtype=np.float64)
    if len(mi) == 0:
        raise InputError("no attempts to fit. Ingest trajectories with outcomes first")
    if np.any(k > n) or np.any(n <= 0):
        raise ValueError("passes must be between 0 and attempts, and attempts positive, in every cell")
    n_models, n_tasks = len(models), len(tasks)
    two_pl = kind == "2pl"
    # Start from logits of smoothed pass rates.
    task_rate = (np.bincount(ti, k, n_tasks) + 0.5) / (np.bincount(ti, n, n_tasks) + 1.0)
    model_rate = (np.bincount(mi, k, n_models) + 0.5) / (np.bincount(mi, n, n_models) + 1.0)
    theta = np.log(model_rate / (1 - model_rate))
    theta = (theta - theta.mean()) / (theta.std() or 1.0)
    b = -np.log(task_rate / (1 - task_rate))
    log_a = np.zeros(n_tasks)

    def cells():
        a_t = np.exp(log_a)[ti]
        diff = theta[mi] - b[ti]
        p = _sigmoid(a_t * diff)
        return a_t, diff, n * p - k, n * p * (1 - p)  # residual = d nll / dz, weight = Fisher info per z

    converged, sweep = False, 0
    for sweep in range(1, max_sweeps + 1):  # noqa: B007 (how many ran is read after the loop)
        a_t, diff, residual, weight = cells()
        step = (np.bincount(mi, residual * a_t, n_models) + theta / PRIOR_SD_THETA**2) / (
            np.bincount(mi, weight * a_t**2, n_models) + 1 / PRIOR_SD_THETA**2
        )
        theta -= np.clip(step, -1, 1)
        moved = np.abs(step).max()
        a_t, diff, residual, weight = cells()
        step = (-np.bincount(ti, residual * a_t, n_tasks) + b / PRIOR_SD_B**2) / (
            np.bincount(ti, weight * a_t**2, n_tasks) + 1 / PRIOR_SD_B**2
        )
        b -= np.clip(step, -1, 1)
        moved = max(moved, np.abs(step).max())
        if two_pl:
            a_t, diff, residual, weight = cells()
            z = a_t * diff  # dz/d(log a) = z
            step = (np.bincount(ti, residual * z, n_tasks) + log_a / PRIOR_SD_LOG_A**2) / (
                np.bincount(ti, weight * z**2, n_tasks) + 1 / PRIOR_SD_LOG_A**2
            )
            log_a -= np.clip(step, -0.5, 0.5)
            moved = max(moved, np.abs(step).max())
        # The likelihood is unchanged by θ+c, b+c (and, for 2PL, by θ·s, b·s, a/s): only the priors
        # fix c and s, and block steps crawl along those directions. Solve for them directly.
        shift = -(theta.sum() / PRIOR_SD_THETA**2 + b.sum() / PRIOR_SD_B**2) / (
            n_models / PRIOR_SD_THETA**2 + n_tasks / PRIOR_SD_B**2
        )
        theta += shift
        b += shift
        if two_pl:
            spread = (theta**2).sum() / PRIOR_SD_THETA**2 + (b**2).sum() / PRIOR_SD_B**2
            v = 0.0  # log of the scale
            for _ in range(5):
                gradient = 2 * spread * np.exp(2 * v) - 2 * (log_a - v).sum() / PRIOR_SD_LOG_A**2
                v -= gradient / (4 * spread * np.exp(2 * v) + 2 * n_tasks / PRIOR_SD_LOG_A**2)
            theta *= np.exp(v)
            b *= np.exp(v)
            log_a -= v
        if moved < tol:
            converged = True
            break
    a = np.exp(log_a)
    a_t, diff, _, weight = cells()
    info_theta = np.bincount(mi, weight * a_t**2, n_models) + 1 / PRIOR_SD_THETA**2
    info_b = np.bincount(ti, weight * a_t**2, n_tasks) + 1 / PRIOR_SD_B**2
    if two_pl:
        info_log_a = np.bincount(ti, weight * (a_t * diff) ** 2, n_tasks) + 1 / PRIOR_SD_LOG_A**2
        a_se = a / np.sqrt(info_log_a)  # delta method from log a to a
    else:
        a_se = np.zeros(n_tasks)
    return IrtFit(
        models=list(models),
        tasks=list(tasks),
        ability=theta,
        ability_se=1 / np.sqrt(info_theta),
        difficulty=b,
        difficulty_se=1 / np.sqrt(info_b),
        discrimination=a,
        discrimination_se=a_se,
        kind=kind,
        converged=converged,
        iterations=sweep,
    )


def measured_tiers(difficulty: np.ndarray, authored_shares: dict[str, float] | None = None) -> list[str]:
    """Tiers from measured difficulty: cut b at the quantiles that reproduce the authored tier
    shares (so "which tasks are in the wrong rung" is a like-for-like question); tertiles by default."""
    order = list(TASK_TIERS)
    shares = authored_shares or {t: 1 / 3 for t in order}
    total = sum(shares.get(t, 0.0) for t in order) or 1.0
    cuts, acc = [], 0.0
    for tier in order[:-1]:
        acc += shares.get(tier, 0.0) / total
        cuts.append(np.quantile(difficulty, acc) if len(difficulty) else 0.0)
    return [order[int(np.searchsorted(cuts, value, side="right"))] for value in difficulty]
